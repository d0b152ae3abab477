// SQL reads of the audit event log: ranges for replay, listing, the current and oldest seq (appends: event-log/).
import type { Queryable } from '../db/db.js';
import type { AuditEventRow } from '../contract/api-rows.js';
import type { StreamPayload } from '../contract/stream-payloads.js';
export type { AuditEventRow } from '../contract/api-rows.js';
import type { AuditSource } from '../contract/event-sources.js';
import type { AuditEventType, StreamEvent, StreamEventType } from './audit-types.js';
import { STREAM_EVENT_TYPES } from './audit-types.js';
import { readBytePage, streamedEventBytesSql } from './byte-pages.js';
import { fieldConditions, timeConditions, type EventFilter } from './event-filters.js';

interface StreamRow {
  seq: number;
  type: StreamEventType;
  occurred_at: Date | string;
  server_id: string | null;
  session_id: string | null;
  tool_name: string | null;
  action: string | null;
  latency_ms: number | null;
  payload: StreamPayload | null;
}

/** The stream payload of a stored row: a tool call's from its columns (exactly what was sent live), others' as stored. */
function storedPayloadOf(row: StreamRow): StreamPayload | null {
  if (row.type !== 'tool_call') return row.payload;
  if (!row.tool_name) return null; // as streamPayloadOf: a tool call without a tool name was not streamed live
  const timestamp = new Date(row.occurred_at).toISOString();
  return { type: 'tool_call', serverId: row.server_id, sessionId: row.session_id, toolName: row.tool_name, action: row.action, latencyMs: row.latency_ms, timestamp };
}

/**
 * Stored seq range (afterSeq, upToSeq] as stream events, oldest first: at most `limit` rows, and no more of them than
 * fit in `maxBytes` (streamedEventBytesSql; the first row always); non-streamed rows are skipped. `firstSeq` and
 * `lastSeq`: the lowest and highest seq the read saw (null when none): only those are known, a short page says nothing
 * of the seqs after it (a replica may not have them yet); the next page reads after `lastSeq`.
 */
export async function readStreamRange(
  db: Queryable,
  orgId: string,
  afterSeq: number,
  upToSeq: number,
  limit: number,
  maxBytes: number,
): Promise<{ events: StreamEvent[]; firstSeq: number | null; lastSeq: number | null; cutByBytes: boolean }> {
  // Sizing reads only the values' headers, so every candidate of the page is sized in one pass (a running sum); the
  // payloads of the rows past the budget are never read out.
  const r = await db.query<StreamRow & { more: boolean }>(
    `SELECT seq, type, occurred_at, server_id, session_id, tool_name, action, latency_ms, payload, more FROM (
       SELECT c.*, sum(c.bytes) OVER w AS total, lead(c.seq) OVER w IS NOT NULL AS more
       FROM (
         SELECT seq, type, occurred_at, server_id, session_id, tool_name, action, latency_ms, CASE WHEN type <> 'tool_call' THEN payload END AS payload,
           ${streamedEventBytesSql('e')} AS bytes
         FROM audit_events e WHERE org_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4
       ) AS c
       WINDOW w AS (ORDER BY c.seq ROWS UNBOUNDED PRECEDING)
     ) AS p
     WHERE p.total <= $5 OR p.total = p.bytes
     ORDER BY seq`,
    [orgId, afterSeq, upToSeq, limit, maxBytes],
  );
  const events: StreamEvent[] = [];
  for (const row of r.rows) {
    if (!(STREAM_EVENT_TYPES as readonly string[]).includes(row.type)) continue;
    const payload = storedPayloadOf(row);
    if (payload) events.push({ seq: Number(row.seq), type: row.type, serverId: row.server_id, payload });
  }
  const last = r.rows[r.rows.length - 1];
  const cutByBytes = last !== undefined && last.more;
  return { events, firstSeq: r.rows.length ? Number(r.rows[0].seq) : null, lastSeq: last ? Number(last.seq) : null, cutByBytes };
}

/** Every seq of the org up to this one was removed by retention (audit_retention_marks, migration 012); 0: none. */
export async function removedThroughSeq(db: Queryable, orgId: string): Promise<number> {
  const r = await db.query<{ seq: number }>('SELECT removed_through_seq AS seq FROM audit_retention_marks WHERE org_id = $1', [orgId]);
  return r.rows.length ? Number(r.rows[0].seq) : 0;
}

/**
 * The org's oldest stored seq (events before it were removed by retention), or null when none is stored. The walk
 * starts at the hour map's smallest seq (a lower bound: retention drops an hour's row only once all its events are
 * gone), so it does not step over the dead index entries of earlier removals that VACUUM has not cleared yet.
 */
export async function oldestStoredSeq(db: Queryable, orgId: string): Promise<number | null> {
  const r = await db.query<{ seq: number | null }>(
    `SELECT min(seq) AS seq FROM audit_events
     WHERE org_id = $1 AND seq >= (SELECT coalesce(min(min_seq), 0) FROM audit_event_hours WHERE org_id = $1)`,
    [orgId],
  );
  return r.rows[0]?.seq == null ? null : Number(r.rows[0].seq);
}

export async function currentSeq(db: Queryable, orgId: string): Promise<number> {
  const r = await db.query<{ event_seq: number }>('SELECT event_seq FROM organizations WHERE id = $1', [orgId]);
  return r.rows.length ? Number(r.rows[0].event_seq) : 0;
}

export interface AuditEventFilter extends EventFilter {
  afterSeq?: number;
  beforeSeq?: number;
  order: 'asc' | 'desc';
  limit: number;
  /** Most bytes of the page's events (READ_PAGE_MAX_BYTES); the first event is returned whatever its size. */
  maxBytes: number;
}


/**
 * The condition that lets a query of one organization use the filter indexes (session, server, tool, action, type;
 * source, migration 010), which lead with uuid_hash(org_id) (migration 006). `org` is the parameter holding the org
 * id; `alias` the table's.
 */
export function orgHashMatches(org: string, alias = ''): string {
  return `uuid_hash(${alias ? `${alias}.` : ''}org_id) = uuid_hash(${org}::uuid)`;
}

/** A page of the listing: its rows, and whether it ended before its row limit because of its byte budget. */
export interface AuditEventPage {
  rows: AuditEventRow[];
  cutByBytes: boolean;
}

/**
 * The organization's events matching `f`, in its order: at most `f.limit` rows, and no more of them than fit in
 * `f.maxBytes` (the first one always), found by the filter's own index and sized before any of them is read out
 * (readBytePage).
 */
export async function listAuditEvents(db: Queryable, orgId: string, f: AuditEventFilter): Promise<AuditEventPage> {
  const sql = await auditFilterSql(db, orgId, f);
  if (!sql) return { rows: [], cutByBytes: false };
  const { where, params } = sql;
  if (f.afterSeq !== undefined) where.push(`seq > $${params.push(f.afterSeq)}`);
  if (f.beforeSeq !== undefined) where.push(`seq < $${params.push(f.beforeSeq)}`);
  const page = await readBytePage<AuditEventDbRow>(db, { where, params, order: f.order, limit: f.limit, maxBytes: f.maxBytes });
  return { rows: page.rows.map(toAuditEventRow), cutByBytes: page.cutByBytes };
}

/** The WHERE conditions and parameters of a filter ($1 is the org id); null when its time range holds no event. */
export async function auditFilterSql(db: Queryable, orgId: string, f: AuditEventFilter | EventFilter): Promise<{ where: string[]; params: unknown[] } | null> {
  const where = ['org_id = $1', orgHashMatches('$1')];
  const params: unknown[] = [orgId];
  fieldConditions(f, '$1', where, params);
  if (!(await timeConditions(db, orgId, f, where, params))) return null;
  return { where, params };
}

/**
 * How many events match `f`, counting at most `cap` + 1 of them (capped: there are more than `cap`), and the org's
 * last seq when counted (the count includes exactly the events up to it). One statement, so both come from one snapshot.
 */
export async function countAuditEvents(db: Queryable, orgId: string, f: EventFilter, cap: number): Promise<{ count: number; capped: boolean; asOfSeq: number }> {
  const asOf = `(SELECT event_seq FROM organizations WHERE id = $1)`;
  const sql = await auditFilterSql(db, orgId, f);
  if (!sql) {
    const r = await db.query<{ seq: string | number }>(`SELECT ${asOf} AS seq`, [orgId]);
    return { count: 0, capped: false, asOfSeq: Number(r.rows[0]?.seq ?? 0) };
  }
  const { where, params } = sql;
  params.push(cap + 1);
  const r = await db.query<{ n: string | number; seq: string | number }>(
    `SELECT (SELECT count(*) FROM (SELECT 1 FROM audit_events WHERE ${where.join(' AND ')} LIMIT $${params.length}) AS m) AS n, ${asOf} AS seq`,
    params,
  );
  const n = Number(r.rows[0].n);
  return { count: Math.min(n, cap), capped: n > cap, asOfSeq: Number(r.rows[0].seq ?? 0) };
}

export interface AuditEventDbRow {
  seq: number;
  type: AuditEventType;
  source: AuditSource;
  occurred_at: Date | string;
  received_at: Date | string;
  server_id: string | null;
  session_id: string | null;
  tool_name: string | null;
  action: string | null;
  latency_ms: number | null;
  metadata: Record<string, unknown>;
}

export function toAuditEventRow(x: AuditEventDbRow): AuditEventRow {
  return {
    seq: Number(x.seq),
    type: x.type,
    source: x.source,
    occurredAt: new Date(x.occurred_at).toISOString(),
    receivedAt: new Date(x.received_at).toISOString(),
    serverId: x.server_id,
    sessionId: x.session_id,
    toolName: x.tool_name,
    action: x.action,
    latencyMs: x.latency_ms,
    metadata: x.metadata,
  };
}

