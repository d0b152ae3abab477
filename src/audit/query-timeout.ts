// Runs reads under a Postgres statement_timeout; a read that takes longer answers 503 with Retry-After instead of holding a connection.
import type { Db, Queryable } from '../db/db.js';
import { Unavailable } from '../shared/domain-errors.js';

/** Runs `read` in a transaction whose statements may each run at most `timeoutMs`; past it, 503 `code`. */
export async function readWithTimeout<T>(db: Db, timeoutMs: number, code: string, what: string, read: (tx: Queryable) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(async (tx) => {
      await tx.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
      return read(tx);
    });
  } catch (err) {
    if ((err as { code?: string }).code === '57014') {
      throw new Unavailable(`${what} took longer than ${timeoutMs} ms; narrow the query (a shorter time range, a field filter) or retry later`, { code: code, retryAfterSeconds: 5 });
    }
    throw err;
  }
}
