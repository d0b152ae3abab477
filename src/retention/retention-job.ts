// The retention job: on a timer on every instance, run by one instance at a time (a lease in Postgres), it removes each
// organization's expired events in bounded batches, then the sessions, servers and shared metadata no event uses any more.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import { currentSeq } from '../audit/audit-repo.js';
import { createJobLease } from './job-lease.js';
import { deleteOutcomesBefore } from '../audit/ingest-requests-repo.js';
import { pruneLeafTiles } from '../verify/merkle-sql.js';
import { deleteEmptyHours, deleteOrphans, deleteUnusedContexts, deleteSeqRange, firstKeptSeqIn, oldestSeq, raiseRetentionMark, receivedAtOf, retainedOrgs } from './retention-repo.js';

export interface RetentionOptions {
  db: Db;
  logger: Logger;
  /** AUDIT_RETENTION_DAYS: the period of organizations without their own; undefined = keep forever. */
  defaultDays: number | undefined;
  /** RETENTION_INTERVAL_MS: how often each instance tries to run a pass. */
  intervalMs: number;
  /** RETENTION_BATCH_ROWS: most events one delete statement removes (one short transaction). */
  batchRows: number;
  /** RETENTION_LEASE_MS: how long a pass holds the job without renewing; another instance may take it after. */
  leaseMs: number;
  /** Identifies this instance in the lease row. */
  holder?: string;
  /** The clock retention measures from (tests move it). */
  now?: () => number;
}

export interface OrgPass {
  orgId: string;
  days: number;
  removedEvents: number;
  /** The oldest seq kept after the pass (the next seq to be written when nothing is kept). */
  keptFromSeq: number | null;
  removedSessions: number;
  removedServers: number;
  /** Shared metadata rows (audit_contexts) no kept event uses. */
  removedContexts: number;
  /** Idempotency-Key outcomes recorded before the cutoff. */
  removedIdempotencyKeys: number;
}

export interface RetentionPass {
  startedAt: string;
  durationMs: number;
  orgs: OrgPass[];
  /** True when the lease was lost midway (the pass stopped; the next one continues). */
  interrupted: boolean;
}

export interface RetentionJob {
  /** One pass now; null when another instance holds the job. */
  runOnce(): Promise<RetentionPass | null>;
  start(): void;
  stop(): Promise<void>;
}

const JOB = 'retention';

export function createRetentionJob(opts: RetentionOptions): RetentionJob {
  const holder = opts.holder ?? randomUUID();
  const lease = createJobLease(opts.db, JOB, holder, opts.leaseMs);
  const now = opts.now ?? Date.now;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<RetentionPass | null> | null = null;

  async function passOrg(orgId: string, days: number): Promise<OrgPass | 'lost'> {
    const cutoff = new Date(now() - days * 86_400_000);
    const out: OrgPass = { orgId, days, removedEvents: 0, keptFromSeq: null, removedSessions: 0, removedServers: 0, removedContexts: 0, removedIdempotencyKeys: 0 };
    const first = await oldestSeq(opts.db, orgId);
    if (first === null) return (await removeKeyRecords(orgId, cutoff, out)) ? out : 'lost';
    const last = await currentSeq(opts.db, orgId);
    const sessions = new Set<string>();
    const servers = new Set<string>();
    // Everything below `lo` is gone. The walk moves by seq ranges, never asking for the oldest row again: right after a
    // large removal the index still holds the dead entries, and finding the first live one would step over all of them.
    let lo = first;
    while (lo <= last) {
      const kept = await firstKeptSeqIn(opts.db, orgId, lo, opts.batchRows, cutoff);
      const hi = kept ?? Math.min(lo + opts.batchRows, last + 1);
      if (hi > lo) {
        await raiseRetentionMark(opts.db, orgId, hi - 1);
        const d = await deleteSeqRange(opts.db, orgId, lo, hi, { sql: lease.heldSql('$4', '$5'), params: [JOB, holder] });
        out.removedEvents += d.removed;
        for (const s of d.sessions) sessions.add(s);
        for (const s of d.servers) servers.add(s);
        if (!(await lease.renew())) return 'lost';
      }
      lo = hi;
      if (kept !== null) {
        out.keptFromSeq = kept;
        break;
      }
    }
    await deleteEmptyHours(opts.db, orgId, lo);
    const orphans = await deleteOrphans(opts.db, orgId, lo, [...sessions], [...servers]);
    out.removedSessions = orphans.sessions;
    out.removedServers = orphans.servers;
    out.removedContexts = await deleteUnusedContexts(opts.db, orgId, lo);
    // The verifiable log keeps what proofs of the kept events and between checkpoints need.
    await pruneLeafTiles(opts.db, orgId, lo);
    // Records of Idempotency-Keys go only as far as their events did: none newer than the oldest event kept.
    const keptSince = out.keptFromSeq === null ? null : await receivedAtOf(opts.db, orgId, out.keptFromSeq);
    const before = keptSince !== null && keptSince < cutoff ? keptSince : cutoff;
    return (await removeKeyRecords(orgId, before, out)) ? out : 'lost';
  }

  /** Removes the org's Idempotency-Key records from before `before`, in batches; false when the lease was lost. */
  async function removeKeyRecords(orgId: string, before: Date, out: OrgPass): Promise<boolean> {
    for (let n = opts.batchRows; n === opts.batchRows; ) {
      n = await deleteOutcomesBefore(opts.db, orgId, before, opts.batchRows);
      out.removedIdempotencyKeys += n;
      if (n > 0 && !(await lease.renew())) return false;
    }
    return true;
  }

  async function pass(): Promise<RetentionPass | null> {
    if (!(await lease.acquire())) return null;
    const started = Date.now();
    const result: RetentionPass = { startedAt: new Date(started).toISOString(), durationMs: 0, orgs: [], interrupted: false };
    try {
      for (const { orgId, days } of await retainedOrgs(opts.db, opts.defaultDays)) {
        const r = await passOrg(orgId, days);
        if (r === 'lost') {
          result.interrupted = true;
          break;
        }
        result.orgs.push(r);
      }
    } finally {
      await lease.release().catch(() => undefined);
    }
    result.durationMs = Date.now() - started;
    const removed = result.orgs.reduce((n, o) => n + o.removedEvents, 0);
    opts.logger.info({ orgs: result.orgs.length, removedEvents: removed, durationMs: result.durationMs, interrupted: result.interrupted }, 'retention pass');
    return result;
  }

  function runOnce(): Promise<RetentionPass | null> {
    // One pass at a time on this instance too; a caller arriving meanwhile shares it.
    running ??= pass().finally(() => {
      running = null;
    });
    return running;
  }

  return {
    runOnce,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        runOnce().catch((err: Error) => opts.logger.warn({ err: { message: err.message } }, 'retention pass failed'));
      }, opts.intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running?.catch(() => undefined);
    },
  };
}
