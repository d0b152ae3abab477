// Db backend over a node-postgres Pool, used when DATABASE_URL is set.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { isStorageUnavailable, type Db, type QueryResult, type Transaction } from './db.js';

// bigint (int8) columns come back as JS numbers: seqs and counts stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

export interface PgDbOptions {
  connectionString: string;
  max: number;
  onError?: (err: Error) => void;
}

export function createPgDb(opts: PgDbOptions): Db {
  const pool = new pg.Pool({
    connectionString: opts.connectionString,
    max: opts.max,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    // A query on a connection whose database has gone silent (network partition, frozen server) fails after this, as a 503.
    query_timeout: 10_000,
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', (err) => opts.onError?.(err));

  const asResult = <R>(r: pg.QueryResult): QueryResult<R> => ({ rows: r.rows as R[], rowCount: r.rowCount ?? 0 });

  return {
    kind: 'postgres',
    async query<R>(sql: string, params?: unknown[]) {
      return asResult<R>(await pool.query(sql, params as unknown[]));
    },
    async transaction<T>(fn: (tx: Transaction) => Promise<T>, txOpts: { queryTimeoutMs?: number } = {}): Promise<T> {
      const client = await pool.connect();
      let broken = false;
      // While checked out, the pool no longer listens for the client's 'error' event: a connection lost mid-transaction
      // would emit it unheard and crash the process. The failing query rejects on its own; here it only marks the client.
      const onError = () => {
        broken = true;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const tx: Transaction = {
          async query<R>(sql: string, params?: unknown[]) {
            if (txOpts.queryTimeoutMs === undefined) return asResult<R>(await client.query(sql, params as unknown[]));
            // node-postgres reads query_timeout from a query's config too (not in its types).
            const config = { text: sql, values: params as unknown[], query_timeout: txOpts.queryTimeoutMs } as pg.QueryConfig;
            return asResult<R>(await client.query(config));
          },
          async copyIn(target: string, data: Iterable<Uint8Array>) {
            await pipeline(Readable.from(data, { objectMode: false }), client.query(copyFrom(`COPY ${target} FROM STDIN (FORMAT binary)`)));
          },
        };
        const out = await fn(tx);
        await client.query('COMMIT');
        return out;
      } catch (err) {
        if (isStorageUnavailable(err)) {
          // The connection is gone or silent: a ROLLBACK would queue behind the stuck query for another timeout. Dropping
          // the connection rolls the transaction back on the server.
          broken = true;
        } else {
          try {
            await client.query('ROLLBACK');
          } catch {
            broken = true;
          }
        }
        throw err;
      } finally {
        client.removeListener('error', onError);
        client.release(broken);
      }
    },
    async ping() {
      await pool.query('SELECT 1');
    },
    async close() {
      await pool.end();
    },
  };
}
