// The event log: append(org, events) for every writer (ingest, sessions, anomalies, the proxy). Writes of one
// organization wait their turn in a keyed batcher (those waiting together commit together), run in one transaction
// holding the organization's seq lock, and are published after commit.
import type { Logger } from 'pino';
import type { DataTransport } from '../../bus/data-transport.js';
import type { Db, Queryable, Transaction } from '../../db/db.js';
import { isStorageUnavailable } from '../../db/db.js';
import { RateLimited, Unavailable } from '../../shared/domain-errors.js';
import { createKeyedBatcher, type JobOutcome } from '../../shared/keyed-batcher.js';
import type { NewAuditEvent, PublishedBatch } from '../audit-types.js';
import type { IdempotencyClaim } from '../ingest-requests-repo.js';
import { appendLocked, isDuplicateIdentity, prepareRequest, type Appended, type PreparedRequest } from './append.js';
import { copySink } from './copy-sink.js';
import { insertSink } from './insert-sink.js';
import { lockOrgSeq } from './log-sql.js';
import type { RowSink, RowSinkName } from './row-sink.js';
import type { CanonicalRecord } from './canonical-record.js';
import type { MerkleStep } from '../../verify/merkle-append.js';

export type { Appended } from './append.js';

/** Called after each commit with what was stored (events, their stream batch, their records); metrics and the anomaly detector listen here. */
export type AfterCommitListener = (orgId: string, stored: NewAuditEvent[], batch: PublishedBatch | null, records: CanonicalRecord[]) => void;

export interface AppendOptions {
  /** The request's Idempotency-Key claim: a key seen before stores nothing and answers its first counts. */
  idempotency?: IdempotencyClaim;
  /** A write the service makes by itself (an anomaly alert): it waits its turn without counting against the bound. */
  internal?: boolean;
}

export interface EventLog {
  /** Appends `events` for `orgId` in one transaction (whole or nothing) and publishes them after commit. */
  append(orgId: string, events: NewAuditEvent[], options?: AppendOptions): Promise<Appended>;
  /**
   * Runs `check` in a transaction holding the org's seq lock and appends the events it returns in that transaction:
   * for state changes (session transitions) whose check and event must commit together.
   */
  appendChecked<T>(orgId: string, check: (tx: Queryable) => Promise<{ events: NewAuditEvent[]; result: T }>, options?: Pick<AppendOptions, 'internal'>): Promise<{ result: T; appended: Appended }>;
  /** Writes of the organization waiting or running in this instance now. */
  queuedWrites(orgId: string): number;
  onCommitted(listener: AfterCommitListener): void;
  readonly sink: RowSinkName;
}

export interface EventLogDeps {
  db: Db;
  transport: Pick<DataTransport, 'publish'>;
  logger: Logger;
  /** Which row sink writes the rows (EVENT_LOG_SINK). */
  sink: RowSinkName;
  /** Writes of one organization waiting at most behind the running one (ORG_WRITE_QUEUE_MAX). */
  maxQueuedWritesPerOrg: number;
  /** Most events of an organization's waiting appends committed together (ORG_WRITE_GROUP_MAX_EVENTS); 0: one each. */
  maxGroupEvents: number;
  /**
   * Whether an append writes its rows without first looking up which identities are stored, and is run again with the
   * lookup only when the dedupe index refuses one (EVENT_LOG_OPTIMISTIC_APPEND).
   */
  optimisticAppend?: boolean;
  /** Adds each append's records to the organization's verifiable log in its transaction (MERKLE_LOG); none: off. */
  merkle?: MerkleStep;
  /** Called after each commit of appends with how many requests it held (metrics). */
  onTransaction?: (requests: number) => void;
}

export const ROW_SINKS: Record<RowSinkName, RowSink> = { insert: insertSink, copy: copySink };

export function createEventLog(deps: EventLogDeps): EventLog {
  const sink = ROW_SINKS[deps.sink];
  const listeners: AfterCommitListener[] = [];

  /** appendLocked, then the verifiable log's step over what it appended, in the same transaction. */
  async function appendLogged(tx: Transaction, orgId: string, lastSeq: number, requests: readonly PreparedRequest[], assumeNew = false): Promise<Awaited<ReturnType<typeof appendLocked>>> {
    const out = await appendLocked(tx, orgId, lastSeq, requests, sink, new Date(), assumeNew);
    if (deps.merkle && out.batch) {
      const done = out.outcomes.flatMap((o) => (o.ok ? [o.value] : []));
      await deps.merkle.appended(tx, orgId, lastSeq, done.flatMap((a) => a.records), done.flatMap((a) => a.stored));
    }
    return out;
  }
  const batcher = createKeyedBatcher<PreparedRequest, Appended>({
    maxWaiting: deps.maxQueuedWritesPerOrg,
    maxBatchWeight: deps.maxGroupEvents,
    runBatch,
    refuse: () => new RateLimited(`too many writes of this organization are waiting (${deps.maxQueuedWritesPerOrg}, ORG_WRITE_QUEUE_MAX); retry shortly`, 1),
    failsFollowers: isStorageUnavailable,
    followerError: () => new Unavailable(),
  });

  function committed(orgId: string, appended: readonly Appended[], batch: PublishedBatch | null): void {
    const stored = appended.length === 1 ? appended[0].stored : appended.flatMap((a) => a.stored);
    const records = appended.length === 1 ? appended[0].records : appended.flatMap((a) => a.records);
    // Not awaited: the answer never waits on the bus. Postgres is the record: receivers fill a lost publish's gap.
    if (batch) void deps.transport.publish(batch).catch((err: Error) => deps.logger.warn({ err: { message: err.message }, orgId }, 'publish failed; receivers will fill the gap from the database'));
    for (const l of listeners) {
      try {
        l(orgId, stored, batch, records);
      } catch (err) {
        deps.logger.error({ err }, 'after-commit listener failed');
      }
    }
  }

  /**
   * One transaction for the requests of a batch. When it fails for another reason than a storage outage, each request
   * is appended again alone, so a request failing on its own input fails alone.
   */
  async function runBatch(orgId: string, requests: PreparedRequest[], assumeNew = deps.optimisticAppend === true): Promise<JobOutcome<Appended>[]> {
    let out: Awaited<ReturnType<typeof appendLocked>>;
    try {
      out = await deps.db.transaction(async (tx) => appendLogged(tx, orgId, await lockOrgSeq(tx, orgId), requests, assumeNew));
    } catch (err) {
      // An identity stored already: nothing of this transaction is kept; the same requests again, looked up first.
      if (assumeNew && isDuplicateIdentity(err)) return runBatch(orgId, requests, false);
      if (requests.length === 1 || isStorageUnavailable(err)) throw err;
      const outcomes: JobOutcome<Appended>[] = [];
      for (const r of requests) {
        const alone = await runBatch(orgId, [r], assumeNew).catch((error: unknown) => [{ ok: false as const, error }]);
        outcomes.push(alone[0]);
      }
      return outcomes;
    }
    deps.onTransaction?.(requests.length);
    committed(orgId, out.outcomes.flatMap((o) => (o.ok ? [o.value] : [])), out.batch);
    return out.outcomes;
  }

  async function append(orgId: string, events: NewAuditEvent[], options: AppendOptions = {}): Promise<Appended> {
    if (events.length === 0) return { seqs: [], records: [], stored: [], accepted: 0, duplicates: 0, createdSessions: [], replayed: false, batch: null };
    if (!options.internal) batcher.refuseIfFull(orgId);
    // Prepared before the turn: the org's seq lock is held only for what needs the database.
    const prepared = prepareRequest({ events, idempotency: options.idempotency });
    deps.merkle?.prepare(prepared.fresh.map((p) => p.event));
    if (!options.internal) return batcher.join(orgId, prepared, events.length);
    return batcher.alone(orgId, async () => {
      const [o] = await runBatch(orgId, [prepared]);
      if (!o.ok) throw o.error;
      return o.value;
    }, false);
  }

  async function appendChecked<T>(orgId: string, check: (tx: Queryable) => Promise<{ events: NewAuditEvent[]; result: T }>, options: Pick<AppendOptions, 'internal'> = {}) {
    const out = await batcher.alone(orgId, () =>
      deps.db.transaction(async (tx) => {
        const lastSeq = await lockOrgSeq(tx, orgId);
        const { events, result } = await check(tx);
        const r = await appendLogged(tx, orgId, lastSeq, [prepareRequest({ events })]);
        const o = r.outcomes[0];
        if (!o.ok) throw o.error;
        return { result, appended: o.value, batch: r.batch };
      }), !options.internal);
    committed(orgId, [out.appended], out.batch);
    return { result: out.result, appended: out.appended };
  }

  return {
    append,
    appendChecked,
    queuedWrites: (orgId) => batcher.size(orgId),
    onCommitted: (listener) => void listeners.push(listener),
    sink: sink.name,
  };
}
