// Stores proxied calls' records through the event log (append, deduplicated by call id), closes their intents, retries
// records the store refused, and sweeps intents left by calls that never completed (one instance at a time, by lease).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { NewAuditEvent } from '../audit/audit-types.js';
import type { Db } from '../db/db.js';
import { createJobLease } from '../retention/job-lease.js';
import { deleteIntents, deleteOrphanIntents, leftIntents, writeIntentsUnlessSuspended, type IntentToWrite } from './call-intents-repo.js';
import { createBatcher } from './batcher.js';
import { toolCallEvent, type CallCompletion, type CallFacts } from './call-record.js';

/**
 * The one write the proxy needs of the event log: append events to an organization's log (a sender-given dedupe key
 * seen before is not stored again). Passed in from app.ts, so the proxy does not depend on how the log is written.
 */
export type AppendEvents = (orgId: string, events: NewAuditEvent[]) => Promise<unknown>;

export interface CallRecorderDeps {
  db: Db;
  append: AppendEvents;
  logger: Logger;
  /** Records held for a retry at most; beyond, the oldest is dropped (its intent, if any, still yields an `unknown` record). */
  maxPending: number;
  sweepIntervalMs: number;
  retryIntervalMs?: number;
  /** Intents turned into records per sweep statement. */
  sweepBatch?: number;
}

const CLOSE_INTERVAL_MS = 100;

interface Pending {
  orgId: string;
  event: NewAuditEvent;
  /** The intent to delete once stored; null for a call without one (denied, or forwarded while the store was down). */
  callId: string | null;
}

export function createCallRecorder(deps: CallRecorderDeps) {
  const logger = deps.logger.child({ component: 'proxy-records' });
  const pending: Pending[] = [];
  const lease = createJobLease(deps.db, 'proxy-intent-sweep', `${process.pid}-${randomUUID()}`, Math.max(10_000, deps.sweepIntervalMs * 4));
  let retryTimer: NodeJS.Timeout | null = null;
  let sweepTimer: NodeJS.Timeout | null = null;
  let sweeping: Promise<void> | null = null;
  let closed = false;
  let dropped = 0;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];

  // Intents of calls about to be forwarded, written together when they arrive together (one statement, one commit).
  const intentWriter = createBatcher<IntentToWrite, boolean>({
    maxBatch: 500,
    flush: async (items) => {
      const written = await writeIntentsUnlessSuspended(deps.db, items);
      return items.map((i) => written.has(i.facts.callId));
    },
  });
  // Closed intents are deleted together, every CLOSE_INTERVAL_MS (one commit for many calls, off the calls' way); a
  // failed delete is left to the sweep, whose record of the call is then a duplicate and not stored.
  let toClose: string[] = [];
  let closeTimer: NodeJS.Timeout | null = null;
  function closeIntent(callId: string): void {
    toClose.push(callId);
    if (toClose.length >= 1000) void flushClosed();
    else closeTimer ??= setTimeout(() => void flushClosed(), CLOSE_INTERVAL_MS);
  }
  function flushClosed(): Promise<void> {
    if (closeTimer) clearTimeout(closeTimer);
    closeTimer = null;
    const ids = toClose;
    toClose = [];
    return ids.length ? deleteIntents(deps.db, ids).catch(() => undefined) : Promise.resolve();
  }
  // Records of one organization stored together when they complete together (one append, one transaction).
  const appenders = new Map<string, ReturnType<typeof createBatcher<NewAuditEvent, void>>>();
  function appenderOf(orgId: string) {
    let a = appenders.get(orgId);
    if (!a) {
      a = createBatcher<NewAuditEvent, void>({
        maxBatch: 1000,
        flush: async (events) => {
          await deps.append(orgId, events);
          return events.map(() => undefined);
        },
      });
      appenders.set(orgId, a);
      if (appenders.size > 10_000) appenders.delete(appenders.keys().next().value!);
    }
    return a;
  }

  async function store(p: Pending): Promise<void> {
    await appenderOf(p.orgId).add(p.event);
    if (p.callId) closeIntent(p.callId);
  }

  function hold(p: Pending): void {
    pending.push(p);
    if (pending.length > deps.maxPending) {
      pending.shift();
      dropped++;
    }
    if (!retryTimer && !closed) retryTimer = setTimeout(retry, deps.retryIntervalMs ?? 1000);
  }

  async function retry(): Promise<void> {
    retryTimer = null;
    if (dropped) {
      logger.error({ dropped }, 'proxy records were dropped from the retry queue (calls with an intent are still recorded as unknown by the sweep)');
      dropped = 0;
    }
    while (pending.length && !closed) {
      try {
        await store(pending[0]);
        pending.shift();
      } catch {
        break;
      }
    }
    if (pending.length && !closed) retryTimer = setTimeout(retry, deps.retryIntervalMs ?? 1000);
  }

  /** Stores a call's record; when the store fails, it is retried in the background. Never throws. */
  async function record(orgId: string, facts: CallFacts, completion: CallCompletion, hasIntent: boolean): Promise<boolean> {
    const p: Pending = { orgId, event: toolCallEvent(facts, completion), callId: hasIntent ? facts.callId : null };
    const done = begin();
    try {
      await store(p);
      return true;
    } catch (err) {
      logger.warn({ err: { message: (err as Error).message }, orgId, callId: facts.callId }, 'storing a proxied call failed; retrying');
      hold(p);
      return false;
    } finally {
      done();
    }
  }

  /** Marks a call whose record is not stored yet (from before it is answered), until the returned function is called. */
  function begin(): () => void {
    inFlight++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      if (--inFlight === 0) {
        const waiters = idleWaiters;
        idleWaiters = [];
        for (const w of waiters) w();
      }
    };
  }

  /** One sweep: the intents past their sweep time become `unknown` records (deduplicated against late completions), then go. */
  async function sweepOnce(): Promise<number> {
    if (!(await lease.acquire())) return 0;
    let done = 0;
    try {
      await deleteOrphanIntents(deps.db);
      for (;;) {
        const left = await leftIntents(deps.db, deps.sweepBatch ?? 200);
        if (left.length === 0) break;
        const byOrg = new Map<string, typeof left>();
        for (const l of left) byOrg.set(l.orgId, [...(byOrg.get(l.orgId) ?? []), l]);
        for (const [orgId, list] of byOrg) {
          await deps.append(orgId, list.map((l) => toolCallEvent(l.facts, { outcome: 'unknown', latencyMs: null, resultBytes: null })));
          await deleteIntents(deps.db, list.map((l) => l.callId));
          done += list.length;
        }
        if (!(await lease.renew())) break;
      }
    } finally {
      await lease.release().catch(() => undefined);
    }
    if (done) logger.warn({ calls: done }, 'recorded proxied calls whose outcome is unknown (the instance forwarding them stopped before they completed)');
    return done;
  }

  function scheduleSweep(delay: number): void {
    if (closed) return;
    sweepTimer = setTimeout(() => {
      sweeping = sweepOnce()
        .catch((err) => logger.warn({ err: { message: (err as Error).message } }, 'sweeping proxy intents failed'))
        .then(() => undefined)
        .finally(() => {
          sweeping = null;
          scheduleSweep(deps.sweepIntervalMs);
        });
    }, delay);
    sweepTimer.unref();
  }

  return {
    /**
     * Writes a call's intent before it is forwarded, unless its session is suspended (false: nothing written). Throws
     * when the store cannot be written.
     */
    writeIntent: (orgId: string, facts: CallFacts, sweepAfterMs: number) => intentWriter.add({ orgId, facts, sweepAfterMs }),
    record,
    begin,
    sweepOnce,
    /** Resolves once no record is being stored (tests: a call's record is stored after its response ended). */
    idle(): Promise<void> {
      return inFlight === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
    },
    /** Records waiting for a retry (metrics, tests). */
    pendingCount: () => pending.length,
    start() {
      scheduleSweep(0);
    },
    async close() {
      closed = true;
      await flushClosed();
      if (retryTimer) clearTimeout(retryTimer);
      if (sweepTimer) clearTimeout(sweepTimer);
      await sweeping;
      if (pending.length) logger.error({ records: pending.length }, 'proxy records still unstored at shutdown (calls with an intent are recorded as unknown by the next sweep)');
    },
  };
}

export type CallRecorder = ReturnType<typeof createCallRecorder>;
