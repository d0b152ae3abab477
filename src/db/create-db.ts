// Chooses the database backend from config: Postgres when DATABASE_URL is set, else PGlite in DATA_DIR.
import type { Config } from '../config.js';
import type { Db } from './db.js';
import { createPgDb } from './pg-db.js';
import { createPgliteDb } from './pglite-db.js';

export async function createDb(config: Config, onError?: (err: Error) => void): Promise<Db> {
  if (config.DATABASE_URL) return createPgDb({ connectionString: config.DATABASE_URL, max: config.PG_POOL_MAX, onError });
  return createPgliteDb(config.DATA_DIR);
}
