// Pages of stored events bounded by bytes as well as rows, sized before their values are read out: the SQL and the reader.
import type { Queryable } from '../db/db.js';

/** An event's metadata as the API shows it (its batch's shared part put back: audit_event_metadata, migration 010), of row `e`. */
export function metadataSql(e: string): string {
  return `CASE WHEN ${e}.context_id IS NULL THEN ${e}.metadata ELSE audit_event_metadata(${e}.metadata,
    (SELECT c.context FROM audit_contexts c WHERE c.org_id = ${e}.org_id AND c.id = ${e}.context_id)) END`;
}

/**
 * The columns an API listing or export shows of an event of row `e`, in the order of AuditEventDbRow (audit-repo);
 * metadata with its batch's shared part put back. With `readOut` (a condition), metadata is read only where it holds.
 */
export function apiEventColumnsSql(e: string, readOut?: string): string {
  const metadata = readOut ? `CASE WHEN ${readOut} THEN ${metadataSql(e)} END` : metadataSql(e);
  return `${e}.seq, ${e}.type, ${e}.source, ${e}.occurred_at, ${e}.received_at, ${e}.server_id, ${e}.session_id, ${e}.tool_name, ${e}.action, ${e}.latency_ms,
  ${metadata} AS metadata`;
}

/** Bytes of an event's text columns (octet_length reads a stored value's size from its header, without decompressing it). */
function textColumnBytes(e: string): string {
  return ['server_id', 'session_id', 'tool_name', 'action'].map((c) => `coalesce(octet_length(${e}.${c}), 0)`).join(' + ');
}

/** The fixed part of an event's bytes: its other columns and the field names and punctuation of its JSON. */
const FIXED_EVENT_BYTES = 256;

/**
 * What a listed or exported event of row `e` weighs, exactly: its metadata as Postgres holds it uncompressed (`|| '{}'`
 * hands pg_column_size a decompressed copy: a 4 MiB compressible value weighs 4 MiB, not the 50 KB it takes on disk;
 * about 1 ms per MiB, no text conversion), its text columns and a fixed part. Within a small factor of its JSON text.
 */
export function listedEventBytesSql(e: string): string {
  return `(coalesce(pg_column_size((${metadataSql(e)}) || '{}'::jsonb), 0) + ${textColumnBytes(e)} + ${FIXED_EVENT_BYTES})`;
}

/** A jsonb value's size when it is stored uncompressed (read from its header), else NULL (only decompressing tells). */
const plainSize = (v: string) => `CASE WHEN pg_column_compression(${v}) IS NULL THEN pg_column_size(${v}) END`;

/**
 * The same weight read from the values' headers alone, for events whose metadata (and shared context) is stored
 * uncompressed, which is every event under about 2 KB; NULL for the others (listedEventBytesSql sizes them).
 */
function plainEventBytesSql(e: string): string {
  const context = `CASE WHEN ${e}.context_id IS NULL THEN 0 ELSE (SELECT ${plainSize('c.context')} FROM audit_contexts c WHERE c.org_id = ${e}.org_id AND c.id = ${e}.context_id) END`;
  return `(${plainSize(`${e}.metadata`)} + ${context} + ${textColumnBytes(e)} + ${FIXED_EVENT_BYTES})`;
}

/**
 * What a streamed event of row `e` weighs: its text columns (a tool call's payload is made from them), its stored
 * payload's length (other types, small ones the service writes) and a fixed part.
 */
export function streamedEventBytesSql(e: string): string {
  return `(${textColumnBytes(e)} + CASE WHEN ${e}.type <> 'tool_call' THEN coalesce(octet_length(${e}.payload::text), 0) ELSE 0 END + ${FIXED_EVENT_BYTES})`;
}

export interface BytePageRequest {
  /** Conditions on audit_events (not aliased) selecting the page's events, over `params`; `$1` is the organization. */
  where: string[];
  params: unknown[];
  /** The page's order (by seq). */
  order: 'asc' | 'desc';
  /** Most events of the page. */
  limit: number;
  /** Most bytes of the page's events (the first one is taken whatever its size). */
  maxBytes: number;
}

export interface BytePage<R> {
  /** The page's rows, in its order. */
  rows: R[];
  /** The byte budget ended the page before its row limit: more events follow its last one. */
  cutByBytes: boolean;
}

/**
 * The first statement of a page: the candidates (the filter's own plan, as a page of rows would be), sized from their
 * values' headers in one pass (a running sum), and read out only while they fit. It stops at the first event whose
 * size the headers do not tell (a compressed value) and returns that one as a marker, without its values.
 */
function headerSizedSql(r: BytePageRequest, limit: string, budget: string): string {
  const dir = r.order === 'asc' ? 'ASC' : 'DESC';
  return `SELECT ${apiEventColumnsSql('w', 'w.bytes IS NOT NULL')}, w.bytes IS NOT NULL AS sized, w.known_total, w.more FROM (
       SELECT c.*, sum(c.bytes) OVER win AS known_total, count(*) FILTER (WHERE c.bytes IS NULL) OVER win AS unsized,
         row_number() OVER win AS n, lead(c.seq) OVER win IS NOT NULL AS more
       FROM (SELECT audit_events.*, ${plainEventBytesSql('audit_events')} AS bytes FROM audit_events WHERE ${r.where.join(' AND ')} ORDER BY seq ${dir} LIMIT ${limit}) AS c
       WINDOW win AS (ORDER BY c.seq ${dir} ROWS UNBOUNDED PRECEDING)
     ) AS w
     WHERE w.unsized - (w.bytes IS NULL)::int = 0 AND (w.n = 1 OR w.known_total <= ${budget})
     ORDER BY w.seq ${dir}`;
}

/**
 * The rest of a page from its first event of unknown size: the candidates' seqs are found first (no value is read),
 * then walked in page order, each one sized exactly (listedEventBytesSql, one primary-key probe) while the sum stays
 * within the budget; the walk stops at the first that does not fit, so at most one event past the page is ever
 * sized, however large the candidates are. Only then are the page's events read. Rows come back unordered, with
 * `page_candidates`.
 */
function walkedSql(r: BytePageRequest, limit: string, budget: string, takeFirst: string): string {
  const dir = r.order === 'asc' ? 'ASC' : 'DESC';
  const sized = (seq: string) => `SELECT e.seq, ${listedEventBytesSql('e')} AS bytes FROM audit_events e WHERE e.org_id = $1 AND e.seq = ${seq}`;
  return `WITH RECURSIVE cand AS MATERIALIZED (
       SELECT ARRAY(SELECT seq FROM audit_events WHERE ${r.where.join(' AND ')} ORDER BY seq ${dir} LIMIT ${limit}) AS s
     ), page AS (
       SELECT 1 AS i, x.seq, x.bytes::bigint AS total
       FROM cand CROSS JOIN LATERAL (${sized('cand.s[1]')}) AS x
       WHERE ${takeFirst} OR x.bytes <= ${budget}
       UNION ALL
       SELECT p.i + 1, x.seq, p.total + x.bytes
       FROM page p CROSS JOIN cand CROSS JOIN LATERAL (${sized('cand.s[p.i + 1]')}) AS x
       WHERE p.total + x.bytes <= ${budget}
     )
     SELECT ${apiEventColumnsSql('audit_events')}, (SELECT cardinality(s) FROM cand) AS page_candidates
     FROM audit_events WHERE org_id = $1 AND seq = ANY (ARRAY(SELECT seq FROM page))`;
}

type Seq = { seq: number | string };

/**
 * A page of the events `r.where` selects, in `r.order`: at most `r.limit` of them, and no more than fit in
 * `r.maxBytes` (the first always, so a page is never empty while events remain). Bounded before anything is read
 * out: events stored uncompressed (the usual ones) are sized from their headers in the page's one statement; from the
 * first compressed one on, the rest of the page is sized one event at a time and stops at the first that does not fit.
 */
export async function readBytePage<R extends Seq>(db: Queryable, r: BytePageRequest): Promise<BytePage<R>> {
  const n = r.params.length;
  const first = await db.query<R & { sized: boolean; known_total: number | string | null; more: boolean }>(
    headerSizedSql(r, `$${n + 1}`, `$${n + 2}`),
    [...r.params, r.limit, r.maxBytes],
  );
  const rows = first.rows;
  const last = rows[rows.length - 1];
  if (!last) return { rows: [], cutByBytes: false };
  if (last.sized) return { rows: rows.map(strip), cutByBytes: last.more };
  // The marker: the prefix before it fit; the rest of the page is walked from it.
  const prefix = rows.slice(0, -1).map(strip);
  const used = prefix.length ? Number(rows[rows.length - 2].known_total) : 0;
  const after = prefix.length ? Number(prefix[prefix.length - 1].seq) : null;
  const where = after === null ? r.where : [...r.where, `seq ${r.order === 'asc' ? '>' : '<'} $${n + 1}`];
  const params = after === null ? [...r.params] : [...r.params, after];
  const m = params.length;
  const rest = await db.query<R & { page_candidates: number | string }>(
    walkedSql({ ...r, where }, `$${m + 1}`, `$${m + 2}`, `$${m + 3}::boolean`),
    [...params, r.limit - prefix.length, r.maxBytes - used, prefix.length === 0],
  );
  const walked = rest.rows.map(strip).sort((a, b) => (r.order === 'asc' ? Number(a.seq) - Number(b.seq) : Number(b.seq) - Number(a.seq)));
  // Cut when the walk stopped before its candidates ran out, or took none of them: the marker did not fit after the
  // prefix (with no prefix, the walk takes at least the marker).
  const cutByBytes = rest.rows.length === 0 ? prefix.length > 0 : walked.length < Number(rest.rows[0].page_candidates);
  return { rows: [...prefix, ...walked], cutByBytes };
}

/** The row without the page's bookkeeping columns. */
function strip<R extends Seq>(row: R): R {
  const { sized: _s, known_total: _k, more: _m, page_candidates: _p, ...rest } = row as R & Record<string, unknown>;
  return rest as unknown as R;
}
