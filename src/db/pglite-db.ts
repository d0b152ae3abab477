// Db backend over embedded PGlite (Postgres in WASM) in DATA_DIR; one connection, so every access is serialized.
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import type { Db, QueryResult, Transaction } from './db.js';
import { lockDataDir } from './data-dir-lock.js';
import { createSerialQueue } from './serial-queue.js';

export async function createPgliteDb(dataDir: string): Promise<Db> {
  await mkdir(dataDir, { recursive: true });
  // One process per directory: a second one sharing it would lose acknowledged events.
  const lock = await lockDataDir(dataDir);
  let pg: PGlite;
  try {
    pg = await PGlite.create(dataDir);
  } catch (err) {
    await lock.release();
    throw err;
  }
  const serial = createSerialQueue();

  // Without parameters, run as a simple-protocol script so multi-statement SQL (migrations) works as on pg.
  const run = async <R>(sql: string, params?: unknown[]): Promise<QueryResult<R>> => {
    if (!params || params.length === 0) {
      const results = await pg.exec(sql);
      const last = results[results.length - 1];
      const rows = (last?.rows ?? []) as R[];
      return { rows, rowCount: Math.max(last?.affectedRows ?? 0, rows.length) };
    }
    const r = await pg.query<R>(sql, params);
    return { rows: r.rows, rowCount: Math.max(r.affectedRows ?? 0, r.rows.length) };
  };

  // PGlite's COPY reads the blob given with the query as the file /dev/blob.
  const copyIn = async (target: string, data: Iterable<Uint8Array>): Promise<void> => {
    await pg.query(`COPY ${target} FROM '/dev/blob' (FORMAT binary)`, [], { blob: new Blob([...data] as BlobPart[]) });
  };

  return {
    kind: 'pglite',
    query<R>(sql: string, params?: unknown[]) {
      return serial(() => run<R>(sql, params));
    },
    transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
      return serial(async () => {
        await pg.exec('BEGIN');
        try {
          const out = await fn({ query: run, copyIn });
          await pg.exec('COMMIT');
          return out;
        } catch (err) {
          await pg.exec('ROLLBACK').catch(() => undefined);
          throw err;
        }
      });
    },
    async ping() {
      await serial(() => run('SELECT 1'));
    },
    async close() {
      try {
        await serial(() => pg.close());
      } finally {
        await lock.release();
      }
    },
  };
}
