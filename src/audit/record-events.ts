// The write path every source uses: store a batch (or a group of an org's waiting batches) in one transaction (gapless seq, dedupe, sessions), then publish it.
import type { Logger } from 'pino';
import type { DataTransport } from '../bus/data-transport.js';
import type { Db, Queryable } from '../db/db.js';
import { isStorageUnavailable } from '../db/db.js';
import { Unavailable } from '../shared/domain-errors.js';
import { storable } from '../shared/input-safety.js';
import { appendEvents, lockOrgSeq, storedDedupeKey } from './audit-repo.js';
import type { IdempotencyClaim } from './ingest-requests-repo.js';
import type { NewAuditEvent, PublishedBatch, RecordResult } from './audit-types.js';
import { prepareEvents, storeRequests, type StoreRequest, type StoredRequest } from './grouped-store.js';
import { createOrgWriteQueue, type MemberOutcome } from './org-write-queue.js';

/** Called after each commit with what was stored; the anomaly detector and metrics listen here. */
export type AfterCommitListener = (orgId: string, stored: NewAuditEvent[], batch: PublishedBatch | null) => void;

export interface EventRecorderDeps {
  db: Db;
  bus: Pick<DataTransport, 'publish'>;
  logger: Logger;
  /** Writes of one organization waiting at most behind the running one (ORG_WRITE_QUEUE_MAX). */
  maxQueuedWritesPerOrg: number;
  /** Most events of an org's waiting ingest requests stored in one transaction (ORG_WRITE_GROUP_MAX_EVENTS); 0 or absent: one request per transaction. */
  maxGroupEvents?: number;
  /** Called after each commit of recordEvents writes with how many requests the transaction stored (metrics). */
  onTransaction?: (requests: number) => void;
}

export interface RecordOptions {
  /** A write the service makes by itself (an anomaly alert): it waits its turn without counting against the bound. */
  internal?: boolean;
  /** The request's Idempotency-Key claim: a key seen before stores nothing and answers its first counts. */
  idempotency?: IdempotencyClaim;
}

/**
 * Stores `events` for `orgId` inside `tx`: drops duplicates (within the batch and against the store), applies the
 * session rules (src/sessions/session-rules.ts) and appends everything with consecutive seqs. With an idempotency
 * claim, a key seen before stores nothing and answers the counts of its first request (`replayed`).
 */
export async function storeEvents(tx: Queryable, orgId: string, input: NewAuditEvent[], idempotency?: IdempotencyClaim): Promise<StoredRequest> {
  const { outcomes } = await storeRequests(tx, orgId, [{ events: input, idempotency }]);
  if (!outcomes[0].ok) throw outcomes[0].error;
  return outcomes[0].value;
}

export function createEventRecorder(deps: EventRecorderDeps) {
  const listeners: AfterCommitListener[] = [];
  const queue = createOrgWriteQueue<StoreRequest, StoredRequest>({ maxWaiting: deps.maxQueuedWritesPerOrg, maxGroupEvents: deps.maxGroupEvents ?? 0, runGroup });

  async function publish(batch: PublishedBatch | null): Promise<void> {
    if (!batch) return;
    // Postgres is the record: a lost publish is repaired by receivers' gap filling, so it never fails the request.
    await deps.bus.publish(batch).catch((err: Error) => deps.logger.warn({ err: { message: err.message }, orgId: batch.orgId }, 'publish failed; receivers will fill the gap from the database'));
  }

  function notify(orgId: string, stored: NewAuditEvent[], batch: PublishedBatch | null): void {
    for (const l of listeners) {
      try {
        l(orgId, stored, batch);
      } catch (err) {
        deps.logger.error({ err }, 'after-commit listener failed');
      }
    }
  }

  /**
   * Stores the requests of one group in one transaction, then publishes what it appended (one batch, in seq order) and
   * tells the listeners about each request. When the transaction fails for another reason than a storage outage, the
   * requests are stored again one by one, so that a request failing on its own input fails alone.
   */
  async function runGroup(orgId: string, requests: StoreRequest[]): Promise<MemberOutcome<StoredRequest>[]> {
    let committed: Awaited<ReturnType<typeof storeRequests>>;
    try {
      committed = await deps.db.transaction((tx) => storeRequests(tx, orgId, requests));
    } catch (err) {
      if (requests.length === 1 || isStorageUnavailable(err)) throw err;
      const outcomes: MemberOutcome<StoredRequest>[] = [];
      let outage = false;
      for (const request of requests) {
        if (outage) {
          outcomes.push({ ok: false, error: new Unavailable() });
          continue;
        }
        try {
          outcomes.push(...(await runGroup(orgId, [request])));
        } catch (error) {
          outage = isStorageUnavailable(error);
          outcomes.push({ ok: false, error });
        }
      }
      return outcomes;
    }
    // After the commit, outside the retry above: nothing here may store the group a second time.
    const { outcomes, batch } = committed;
    deps.onTransaction?.(requests.length);
    // Not awaited: the answer to the sender never waits on the bus (a silent Redis would add its timeout to every request).
    void publish(batch);
    // One commit, one notification: its listeners (metrics, the anomaly detector's rate counter) see every event once.
    notify(orgId, requests.length === 1 && outcomes[0].ok ? outcomes[0].value.stored : outcomes.flatMap((o) => (o.ok ? o.value.stored : [])), batch);
    return outcomes;
  }

  function toResult(events: NewAuditEvent[], out: StoredRequest): RecordResult {
    return { accepted: events.length - out.duplicates, duplicates: out.duplicates, batch: out.batch, createdSessions: out.createdSessions, replayed: out.replayed };
  }

  /**
   * Stores a batch for one org in one transaction and publishes it after commit. Requests of the org waiting behind the
   * running write are stored together, in one transaction (group commit), each still answered with its own counts.
   */
  async function recordEvents(orgId: string, events: NewAuditEvent[], opts: RecordOptions = {}): Promise<RecordResult> {
    if (events.length === 0) return { accepted: 0, duplicates: 0, batch: null, createdSessions: [] };
    // A write the queue would refuse is refused before its events are walked.
    if (!opts.internal) queue.refuseIfFull(orgId);
    // Made storable before waiting: the org's turn (and its seq lock) is held only for what needs the database. The
    // rows' JSON too, while the org's lane holds at most a group's worth of events with this request: a write waiting
    // behind more holds its events only (their text would double what it holds), and its rows are made in its turn.
    const rowsAhead = !opts.internal && queue.events(orgId) + events.length <= (deps.maxGroupEvents ?? 0);
    const request: StoreRequest = { events, idempotency: opts.idempotency, prepared: prepareEvents(events, rowsAhead) };
    if (opts.internal) {
      // Internal writes (anomaly alerts) run alone, without counting against the bound.
      const out = await queue.run(orgId, async () => {
        const [o] = await runGroup(orgId, [request]);
        if (!o.ok) throw o.error;
        return o.value;
      }, true);
      return toResult(events, out);
    }
    return toResult(events, await queue.join(orgId, request, events.length));
  }

  /**
   * Runs `fn` in a transaction holding the org's seq lock; fn returns events to append after its own checks.
   * Used by state changes (session transitions) whose check and event must commit together.
   */
  async function recordWith<T>(orgId: string, fn: (tx: Queryable) => Promise<{ events: NewAuditEvent[]; result: T }>, opts: RecordOptions = {}): Promise<T> {
    const out = await queue.run(orgId, () => deps.db.transaction(async (tx) => {
      const lastSeq = await lockOrgSeq(tx, orgId);
      const { events, result } = await fn(tx);
      const batch = await appendEvents(tx, orgId, lastSeq, events.map((e) => storable({ ...e, dedupeKey: storedDedupeKey(e.dedupeKey) })));
      return { batch, result, events };
    }), opts.internal);
    void publish(out.batch);
    notify(orgId, out.events, out.batch);
    return out.result;
  }

  return {
    recordEvents,
    recordWith,
    /** Writes of the organization in this instance's queue now (running and waiting). */
    queuedWrites: (orgId: string) => queue.size(orgId),
    onCommitted(listener: AfterCommitListener) {
      listeners.push(listener);
    },
  };
}

export type EventRecorder = ReturnType<typeof createEventRecorder>;
