// The Db interface every repository uses: queries, transactions, health and close, over Postgres or PGlite.
export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<R>>;
}

/** A connection inside a transaction: queries, and COPY of binary rows into a table. */
export interface Transaction extends Queryable {
  /**
   * `COPY <target> FROM ... (FORMAT binary)` of `data`, the binary COPY stream in chunks (header, tuples, trailer). On
   * Postgres the chunks are sent as they are produced (Postgres works on the first while the next is made); PGlite
   * reads them as one blob.
   */
  copyIn(target: string, data: Iterable<Uint8Array>): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs fn inside BEGIN/COMMIT on one connection; rolls back when fn throws. `queryTimeoutMs` replaces the client-side
   * limit on one statement's answer (Postgres; for maintenance such as migrations that build indexes on large tables).
   */
  transaction<T>(fn: (tx: Transaction) => Promise<T>, opts?: { queryTimeoutMs?: number }): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Errors that mean the database could not be reached or went away: callers answer 503, not 500. */
export function isStorageUnavailable(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: string; message?: string };
  const code = e.code ?? '';
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH'].includes(code)) return true;
  // 08xxx connection exceptions, 57P01-57P03 admin shutdown / crash / cannot connect now, 53300 too many connections
  if (/^08/.test(code) || ['57P01', '57P02', '57P03', '53300', '55P03'].includes(code)) return true;
  const msg = e.message ?? '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|not queryable|terminating connection/i.test(msg);
}
