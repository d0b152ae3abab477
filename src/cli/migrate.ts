// `npm run migrate`: applies pending migrations to the configured database and exits non-zero on failure.
import { loadConfig } from '../config.js';
import { createDb } from '../db/create-db.js';
import { migrate } from '../db/migrate.js';

const config = loadConfig(process.env);
const db = await createDb(config);
try {
  const applied = await migrate(db);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  await db.close();
} catch (err) {
  console.error('migration failed:', err instanceof Error ? err.message : err);
  await db.close().catch(() => undefined);
  process.exit(1);
}
