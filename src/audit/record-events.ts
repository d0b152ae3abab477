// The write path every source uses: store a batch in one transaction (gapless seq, dedupe, sessions), then publish it.
import type { Logger } from 'pino';
import type { Bus } from '../bus/bus.js';
import type { Db, Queryable } from '../db/db.js';
import { applySessionRules, sessionsOf } from '../sessions/session-rules.js';
import { storable } from '../shared/input-safety.js';
import { appendEvents, existingKeysAndSessions, isIdentityKey, lockOrgSeq, storedDedupeKey } from './audit-repo.js';
import { priorOutcome, saveOutcome, type IdempotencyClaim } from './ingest-requests-repo.js';
import type { NewAuditEvent, PublishedBatch, RecordResult } from './audit-types.js';
import { createOrgWriteQueue } from './org-write-queue.js';

/** Called after each commit with what was stored; the anomaly detector and metrics listen here. */
export type AfterCommitListener = (orgId: string, stored: NewAuditEvent[], batch: PublishedBatch | null) => void;

export interface EventRecorderDeps {
  db: Db;
  bus: Bus;
  logger: Logger;
  /** Writes of one organization waiting at most behind the running one (ORG_WRITE_QUEUE_MAX). */
  maxQueuedWritesPerOrg: number;
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
export async function storeEvents(
  tx: Queryable,
  orgId: string,
  input: NewAuditEvent[],
  idempotency?: IdempotencyClaim,
): Promise<{ stored: NewAuditEvent[]; duplicates: number; batch: PublishedBatch | null; createdSessions: string[]; replayed?: boolean }> {
  // Everything that needs no database happens before the org's seq lock is taken.
  const seen = new Set<string>();
  const fresh: NewAuditEvent[] = [];
  for (const raw of input) {
    const e = storable({ ...raw, dedupeKey: storedDedupeKey(raw.dedupeKey) });
    if (seen.has(e.dedupeKey)) continue;
    seen.add(e.dedupeKey);
    fresh.push(e);
  }
  const callSessions = sessionsOf(fresh);

  const lastSeq = await lockOrgSeq(tx, orgId);
  const prior = idempotency ? await priorOutcome(tx, orgId, idempotency) : null;
  if (prior) return { stored: [], duplicates: input.length - prior.accepted, batch: null, createdSessions: [], replayed: true };
  const identities = fresh.map((e) => e.dedupeKey).filter(isIdentityKey);
  const { existing, statuses } = await existingKeysAndSessions(tx, orgId, identities, callSessions);
  const toStore = existing.size ? fresh.filter((e) => !existing.has(e.dedupeKey)) : fresh;

  const sessions = applySessionRules(statuses, toStore, new Date());
  const batch = await appendEvents(tx, orgId, lastSeq, sessions.events, sessions.upserts);
  const duplicates = input.length - toStore.length;
  if (idempotency) await saveOutcome(tx, orgId, idempotency, { accepted: toStore.length, duplicates });
  return { stored: sessions.events, duplicates, batch, createdSessions: sessions.created };
}

export function createEventRecorder(deps: EventRecorderDeps) {
  const listeners: AfterCommitListener[] = [];
  const queue = createOrgWriteQueue({ maxWaiting: deps.maxQueuedWritesPerOrg });

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

  /** Stores a batch for one org in one transaction and publishes it after commit. */
  async function recordEvents(orgId: string, events: NewAuditEvent[], opts: RecordOptions = {}): Promise<RecordResult> {
    if (events.length === 0) return { accepted: 0, duplicates: 0, batch: null, createdSessions: [] };
    const out = await queue.run(orgId, () => deps.db.transaction((tx) => storeEvents(tx, orgId, events, opts.idempotency)), opts.internal);
    // Not awaited: the answer to the sender never waits on the bus (a silent Redis would add its timeout to every request).
    void publish(out.batch);
    notify(orgId, out.stored, out.batch);
    return { accepted: events.length - out.duplicates, duplicates: out.duplicates, batch: out.batch, createdSessions: out.createdSessions, replayed: out.replayed };
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
    onCommitted(listener: AfterCommitListener) {
      listeners.push(listener);
    },
  };
}

export type EventRecorder = ReturnType<typeof createEventRecorder>;
