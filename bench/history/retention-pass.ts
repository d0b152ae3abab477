// One retention pass over a database filled by bench/sql/history-fill.sql, with a period of RETENTION_DAYS (default 30)
// for the large organization: total duration, statements, and the longest statement (each delete is its own
// transaction; the orphan check holds the organization's seq lock for its transaction). `npm run bench -- history`
// measures the same pass (bench/lib/retention-measure.ts) with ingest running beside it.
// DATABASE_URL=postgres://postgres@127.0.0.1:5432/hist_scratch npx tsx bench/history/retention-pass.ts
import { createPgDb } from '../../src/db/pg-db.js';
import { migrate } from '../../src/db/migrate.js';
import { measureRetentionPass } from '../lib/retention-measure.js';

const ORG = process.env.HISTORY_ORG ?? '00000000-0000-4000-8000-00000000000a';
const days = Number(process.env.RETENTION_DAYS ?? 30);
const db = createPgDb({ connectionString: process.env.DATABASE_URL!, max: 2 });
await migrate(db);
await db.query('UPDATE organizations SET retention_set = (id = $1), retention_days = CASE WHEN id = $1 THEN $2::int END', [ORG, days]);
await db.close();
const m = await measureRetentionPass(process.env.DATABASE_URL!, ORG, Number(process.env.RETENTION_BATCH_ROWS ?? 10_000));
console.log(JSON.stringify(m, null, 1));
