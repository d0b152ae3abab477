// Forward-only migration runner: applies migrations/NNN_name.sql in order, once, under an advisory lock.
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { Db } from './db.js';

// src/db/migrate.ts and dist/src/db/migrate.js both live below the project root that holds migrations/.
const here = path.dirname(fileURLToPath(import.meta.url));
export const MIGRATIONS_DIR = path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../../../migrations' : '../../migrations');

const LOCK_KEY = 7_243_901_117; // arbitrary, constant: "audit-stream migrations"
/** A migration may build indexes on a large table: it is not held to the per-statement answer limit of requests. */
const MIGRATION_QUERY_TIMEOUT_MS = 6 * 3_600_000;

export interface Migration {
  version: string;
  sql: string;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d+_.+\.sql$/.test(f)).sort();
  return Promise.all(files.map(async (f) => ({ version: f.replace(/\.sql$/, ''), sql: await readFile(path.join(dir, f), 'utf8') })));
}

/** Applies pending migrations in one transaction holding an advisory lock, so concurrent starters wait and then find nothing to do. */
export async function migrate(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
    await tx.query('CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.query(m.sql);
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [m.version]);
      applied.push(m.version);
    }
    return applied;
  }, { queryTimeoutMs: MIGRATION_QUERY_TIMEOUT_MS });
}
