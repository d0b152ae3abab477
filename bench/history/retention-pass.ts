// One retention pass over a database filled by bench/sql/history-fill.sql, with a period of RETENTION_DAYS (default 30)
// for the large organization: total duration, statements, and the longest statement (each delete is its own
// transaction; the orphan check holds the organization's seq lock for its transaction).
// DATABASE_URL=postgres://postgres@127.0.0.1:5432/hist_scratch npx tsx bench/history/retention-pass.ts
import { pino } from 'pino';
import { createPgDb } from '../../src/db/pg-db.js';
import type { Db, Queryable } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createRetentionJob } from '../../src/retention/retention-job.js';

const ORG = process.env.HISTORY_ORG ?? '00000000-0000-4000-8000-00000000000a';
const days = Number(process.env.RETENTION_DAYS ?? 30);
const inner = createPgDb({ connectionString: process.env.DATABASE_URL!, max: 4 });
await migrate(inner);
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
  transaction: (fn, opts) => timed('(transaction)', () => inner.transaction((tx: Queryable) => fn(tx), opts)),
};
await inner.query('UPDATE organizations SET retention_set = (id = $1), retention_days = CASE WHEN id = $1 THEN $2::int END', [ORG, days]);
const before = await inner.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_events WHERE org_id = $1', [ORG]);
const job = createRetentionJob({ db, logger: pino({ level: 'silent' }), defaultDays: undefined, intervalMs: 3_600_000, batchRows: Number(process.env.RETENTION_BATCH_ROWS ?? 10_000), leaseMs: 300_000 });
const pass = await job.runOnce();
const after = await inner.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_events WHERE org_id = $1', [ORG]);
const deletes = timings.filter((t) => t.sql.startsWith('WITH d AS ( DELETE'));
deletes.sort((a, b) => a.ms - b.ms);
const longest = [...timings].sort((a, b) => b.ms - a.ms).slice(0, 3);
console.log(JSON.stringify({ days, before: before.rows[0].n, after: after.rows[0].n, pass, statements: timings.length, deleteStatements: deletes.length,
  deleteMsMedian: deletes[Math.floor(deletes.length / 2)]?.ms, deleteMsMax: deletes[deletes.length - 1]?.ms, longest }, null, 1));
await inner.close();
