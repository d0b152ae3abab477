// The INSERT row sink: rows as JSON documents read by jsonb_to_recordset, in statements of bounded size.
import type { Transaction } from '../../db/db.js';
import { ROW_COLUMNS, type EventRow, type RowSink } from './row-sink.js';

/** Rows one statement carries at most. */
export const ROWS_PER_STATEMENT = 2_000;
/** Characters of JSON one statement carries at most (a single larger row still goes alone). */
export const MAX_STATEMENT_CHARS = 8 * 1024 * 1024;

/**
 * One statement's rows ($2, a JSON array) of an organization ($1). Read as jsonb: Postgres parses the array once and
 * takes each row's metadata from it as jsonb. The payload travels as a JSON string, so the json column keeps the text.
 */
const INSERT_SQL = `INSERT INTO audit_events (${ROW_COLUMNS.join(', ')})
  SELECT $1, r.seq, r.occurred_at, r.received_at, r.source, r.type, r.server_id, r.session_id, r.tool_name, r.action, r.latency_ms,
    r.payload::json, r.metadata, decode(r.dedupe_key, 'hex'), r.context_id
  FROM jsonb_to_recordset($2::jsonb) AS r(seq bigint, occurred_at timestamptz, received_at timestamptz, source text, type text,
    server_id text, session_id text, tool_name text, action text, latency_ms int, payload text, metadata jsonb, dedupe_key text, context_id int)`;

/** One row as a JSON object (its metadata is JSON text already, so it is put in as is). */
function rowJson(row: EventRow): string {
  const r = row.record;
  const head = JSON.stringify({
    seq: r.seq,
    occurred_at: r.occurredAt,
    received_at: r.receivedAt,
    source: r.source,
    type: r.type,
    server_id: r.serverId,
    session_id: r.sessionId,
    tool_name: r.toolName,
    action: r.action,
    latency_ms: r.latencyMs,
    payload: row.payload,
    dedupe_key: row.dedupeDigest?.toString('hex') ?? null,
    context_id: row.contextId,
  });
  return `${head.slice(0, -1)},"metadata":${row.metadata}}`;
}

/** JSON arrays of consecutive rows, at most `perStatement` rows and `maxChars` characters each (unless one row is longer). */
export function* statementSlices(rows: readonly string[], maxChars = MAX_STATEMENT_CHARS, perStatement = ROWS_PER_STATEMENT): Generator<string> {
  let from = 0;
  while (from < rows.length) {
    let to = from + 1;
    let chars = 2 + rows[from].length;
    while (to < rows.length && to - from < perStatement && chars + 1 + rows[to].length <= maxChars) chars += 1 + rows[to++].length;
    yield `[${rows.slice(from, to).join(',')}]`;
    from = to;
  }
}

export const insertSink: RowSink = {
  name: 'insert',
  async write(tx: Transaction, orgId: string, rows: readonly EventRow[]): Promise<void> {
    for (const slice of statementSlices(rows.map(rowJson))) await tx.query(INSERT_SQL, [orgId, slice]);
  },
};
