// One pass of the service's retention job, run in this process over an instrumented Db: every statement and transaction
// timed. Each DELETE of a seq range is its own statement (row locks only); each orphan check is a transaction that holds
// the organization's seq lock (which its ingest waits for). Shared by the history scenario and bench/history/retention-pass.ts.
import { pino } from 'pino';
import type { Db } from '../../src/db/db.js';
import { createPgDb } from '../../src/db/pg-db.js';
import { createRetentionJob } from '../../src/retention/retention-job.js';

export interface RetentionMeasure {
  batchRows: number;
  days: number;
  eventsBefore: number;
  eventsAfter: number;
  removedEvents: number;
  removedSessions: number;
  removedServers: number;
  durationMs: number;
  interrupted: boolean;
  statements: number;
  deletes: { count: number; medianMs: number; maxMs: number };
  /** Orphan checks: transactions holding the organization's seq lock (their time includes waiting for it). */
  seqLockTransactions: { count: number; maxMs: number };
  /** The three longest statements or transactions of the pass. */
  longest: { sql: string; ms: number }[];
}

/** Runs one pass now over every organization with a period (set beforehand); counts `orgId`'s events before and after. */
export async function measureRetentionPass(databaseUrl: string, orgId: string, batchRows = 10_000): Promise<RetentionMeasure> {
  const inner = createPgDb({ connectionString: databaseUrl, max: 4 });
  try {
    const timings: { sql: string; ms: number }[] = [];
    const timed = async <T>(sql: string, run: () => Promise<T>): Promise<T> => {
      const t = performance.now();
      try {
        return await run();
      } finally {
        timings.push({ sql: sql.replace(/\s+/g, ' ').slice(0, 60), ms: performance.now() - t });
      }
    };
    const db: Db = {
      ...inner,
      query: (sql, params) => timed(sql, () => inner.query(sql, params)),
      transaction: (fn, opts) => timed('(transaction)', () => inner.transaction((tx) => fn(tx), opts)),
    };
    const count = async () => (await inner.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_events WHERE org_id = $1', [orgId])).rows[0].n;
    const eventsBefore = await count();
    const job = createRetentionJob({ db, logger: pino({ level: 'silent' }), defaultDays: undefined, intervalMs: 3_600_000, batchRows, leaseMs: 300_000 });
    const pass = await job.runOnce();
    if (!pass) throw new Error('retention: another instance holds the job lease');
    const eventsAfter = await count();
    const org = pass.orgs.find((o) => o.orgId === orgId);
    const deletes = timings.filter((t) => t.sql.startsWith('WITH d AS ( DELETE')).sort((a, b) => a.ms - b.ms);
    const txs = timings.filter((t) => t.sql === '(transaction)');
    return {
      batchRows,
      days: org?.days ?? NaN,
      eventsBefore,
      eventsAfter,
      removedEvents: org?.removedEvents ?? 0,
      removedSessions: org?.removedSessions ?? 0,
      removedServers: org?.removedServers ?? 0,
      durationMs: pass.durationMs,
      interrupted: pass.interrupted,
      statements: timings.length,
      deletes: { count: deletes.length, medianMs: deletes[Math.floor(deletes.length / 2)]?.ms ?? NaN, maxMs: deletes[deletes.length - 1]?.ms ?? NaN },
      seqLockTransactions: { count: txs.length, maxMs: txs.length ? Math.max(...txs.map((t) => t.ms)) : NaN },
      longest: [...timings].sort((a, b) => b.ms - a.ms).slice(0, 3),
    };
  } finally {
    await inner.close();
  }
}
