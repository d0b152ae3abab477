// SQL for the audit event log: gapless per-org seq assignment, dedupe, reads for replay and listing.
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/db.js';
import type { AuditEventRow } from '../contract/api-rows.js';
import type { StreamPayload } from '../contract/stream-payloads.js';
export type { AuditEventRow } from '../contract/api-rows.js';
import type { AuditEventType, AuditSource, NewAuditEvent, PublishedBatch, StreamEvent, StreamEventType } from './audit-types.js';
import type { SessionStatus, SessionUpsert } from '../sessions/session-rules.js';
import { sessionStatusesSql, sessionUpsertsJson, upsertSessionsSql } from '../sessions/sessions-repo.js';
import { STREAM_EVENT_TYPES } from './audit-types.js';
import { NotFound } from '../shared/domain-errors.js';
import { eventRow, rowJson, rowSlices, toolCallPayload, type EventRow } from './append-rows.js';
import { fieldConditions, timeConditions, type EventFilter } from './event-filters.js';
import { WriteContexts } from './shared-metadata.js';

const MAX_KEY_LENGTH = 200;

/**
 * Dedupe keys travel to Postgres as given when short, else as a digest, so statements stay small. Postgres stores
 * the first 16 bytes of their SHA-256 (audit_dedupe_digest, migration 006).
 */
export function storedDedupeKey(key: string): string {
  return key.length <= MAX_KEY_LENGTH ? key : `sha256:${createHash('sha256').update(key).digest('base64url')}`;
}

/** Locks the org's counter row for the rest of the transaction and returns its last seq. Commit order = seq order. */
export async function lockOrgSeq(tx: Queryable, orgId: string): Promise<number> {
  const r = await tx.query<{ event_seq: number }>('SELECT event_seq FROM organizations WHERE id = $1 FOR UPDATE', [orgId]);
  if (r.rows.length === 0) throw new NotFound('organization not found');
  return Number(r.rows[0].event_seq);
}

/**
 * In one round trip (the org's seq lock is held, so every statement counts): of the given stored dedupe keys, those
 * already present in the org; and the status of the given sessions (absent ids are unseen sessions). One probe of the
 * (org_id, dedupe_key) index per key (the LATERAL ... LIMIT 1 cannot be flattened): with `dedupe_key = ANY(...)` and
 * stale statistics (an org that grew since the last ANALYZE) the planner scanned every row of the org.
 */
export async function existingKeysAndSessions(
  tx: Queryable,
  orgId: string,
  keys: string[],
  sessionIds: string[],
): Promise<{ existing: Set<string>; statuses: Map<string, SessionStatus> }> {
  const existing = new Set<string>();
  const statuses = new Map<string, SessionStatus>();
  if (keys.length === 0 && sessionIds.length === 0) return { existing, statuses };
  const r = await tx.query<{ kind: 'k' | 's'; id: string; status: SessionStatus | null }>(
    `SELECT 'k' AS kind, k.key AS id, NULL::text AS status FROM unnest($2::text[]) AS k(key)
     CROSS JOIN LATERAL (SELECT 1 FROM audit_events e WHERE e.org_id = $1 AND e.dedupe_key = audit_dedupe_digest(k.key) LIMIT 1) AS hit
     UNION ALL
     ${sessionStatusesSql('$1', '$3')}`,
    [orgId, keys, sessionIds],
  );
  for (const row of r.rows) {
    if (row.kind === 'k') existing.add(row.id);
    else statuses.set(row.id, row.status as SessionStatus);
  }
  return { existing, statuses };
}

/**
 * Inserts one slice of rows (a JSON array, $2) of an org's batch. The array is read as jsonb: Postgres parses it once,
 * and each row's metadata is taken from it as jsonb (read as json, the metadata's text was parsed a second time into
 * jsonb; about a sixth less backend time per row). The payload travels as a JSON string, so the json column keeps
 * exactly the text the service wrote (jsonb would reorder its keys). With `contexts` (the parameter holding the
 * write's shared metadata, see contextCtes) each row's `ctx` (a position in that list) becomes its context_id, by one
 * join however many contexts the write has (rows still go in in seq order).
 */
function insertRowsSql(contexts: string | null): string {
  return `INSERT INTO audit_events (org_id, seq, occurred_at, source, type, server_id, session_id, tool_name, action, latency_ms, payload, metadata, dedupe_key${contexts ? ', context_id' : ''})
       SELECT $1, r.seq, r.occurred_at, r.source, r.type, r.server_id, r.session_id, r.tool_name, r.action, r.latency_ms, r.payload::json, r.metadata, audit_dedupe_digest(r.dedupe_key)${contexts ? ', m.id' : ''}
       FROM jsonb_to_recordset($2::jsonb) AS r(seq bigint, occurred_at timestamptz, source text, type text, server_id text, session_id text,
         tool_name text, action text, latency_ms int, payload text, metadata jsonb, dedupe_key text${contexts ? ', ctx int' : ''})${
         contexts
           ? `
       LEFT JOIN (SELECT c_in.i, x.id FROM c_in JOIN ctx x ON x.digest = c_in.digest) AS m ON m.i = r.ctx
       ORDER BY r.seq`
           : ''
       }`;
}

/**
 * The write's shared metadata (the parameter `p`: a JSON array of {i, context, last_seq}) upserted into the org's
 * audit_contexts: a context already stored (same digest) gets its last_seq raised, a new one the next free id of the
 * org (ids are assigned under the org's seq lock, so no other write assigns them meanwhile). `ctx` returns every id.
 */
function contextCtes(p: string): string {
  return `c_in AS (
       SELECT c.i, audit_context_digest(c.context) AS digest, c.context, c.last_seq FROM json_to_recordset(${p}::json) AS c(i int, context jsonb, last_seq bigint)
     ), ctx AS (
       INSERT INTO audit_contexts AS a (org_id, id, digest, context, last_seq)
       SELECT $1, (SELECT coalesce(max(id), 0) FROM audit_contexts WHERE org_id = $1) + row_number() OVER (ORDER BY u.digest), u.digest, u.context, u.last_seq
       FROM (SELECT DISTINCT ON (digest) digest, context, max(last_seq) OVER (PARTITION BY digest) AS last_seq FROM c_in ORDER BY digest) AS u
       ON CONFLICT (org_id, digest) DO UPDATE SET last_seq = greatest(a.last_seq, excluded.last_seq)
       RETURNING a.id, a.digest
     )`;
}

/** A slice that is not the batch's last: its rows (and, when it has some, the write's shared metadata). */
const INSERT_ROWS_SQL = insertRowsSql(null);
const INSERT_ROWS_WITH_CONTEXTS_SQL = `WITH ${contextCtes('$3')} ${insertRowsSql('$3')}`;

/** The last (often the only) slice of a batch: its rows, unseen servers, session upserts and the org counter. */
function appendLastSliceSql(contexts: boolean): string {
  return `WITH ${contexts ? `${contextCtes('$6')}, ` : ''}ins AS (
       ${insertRowsSql(contexts ? '$6' : null)}
     ), srv AS (
       INSERT INTO servers (org_id, server_id) SELECT $1, unnest($4::text[])
       ON CONFLICT (org_id, server_id) DO UPDATE SET last_seen_at = now()
     ), ses AS (
       ${upsertSessionsSql('$1', '$5')}
     )
     UPDATE organizations SET event_seq = $3 WHERE id = $1`;
}
const APPEND_LAST_SLICE_SQL = appendLastSliceSql(false);
const APPEND_LAST_SLICE_WITH_CONTEXTS_SQL = appendLastSliceSql(true);

/**
 * Inserts events (already deduplicated, dedupe keys already in stored form) after `lastSeq`, advances the org counter,
 * registers unseen servers, and applies the session upserts of the session rules. `rows[i]`, when given, is
 * eventRow(events[i]) made before the lock was taken; the others are made here.
 * Must run in the transaction that called lockOrgSeq.
 */
export async function appendEvents(
  tx: Queryable,
  orgId: string,
  lastSeq: number,
  events: NewAuditEvent[],
  sessions: readonly SessionUpsert[] = [],
  rows: readonly (EventRow | undefined)[] = [],
): Promise<PublishedBatch | null> {
  if (events.length === 0) return null;
  const n = events.length;
  const json: string[] = new Array(n);
  const streamed: StreamEvent[] = [];
  const servers = new Set<string>();
  const contexts = new WriteContexts();

  for (let i = 0; i < n; i++) {
    const e = events[i];
    const seq = lastSeq + i + 1;
    const row = rows[i] ?? eventRow(e);
    // Only rows with shared metadata carry `ctx` (absent is NULL to jsonb_to_recordset).
    json[i] = rowJson(row, seq, row.shared ? contexts.use(row.shared, seq) : null);
    if (e.serverId) servers.add(e.serverId);
    if (row.payload) streamed.push({ seq, type: e.type as StreamEventType, serverId: e.serverId ?? null, payload: row.payload });
  }

  // The rows travel as JSON documents in slices of bounded size: a batch of ordinary size is one statement, one round
  // trip while the org's seq lock is held; a larger one is several statements in the same transaction, the last of
  // which also updates the counters. The write's shared metadata goes with every slice (each upserts it and reads its
  // ids; a batch is rarely sliced).
  const ctxJson = contexts.entries.length ? JSON.stringify(contexts.entries) : null;
  const slices = rowSlices(json);
  let slice = slices.next();
  while (!slice.done) {
    const next = slices.next();
    if (next.done) {
      const params = [orgId, slice.value, lastSeq + n, [...servers].sort(), sessionUpsertsJson(sessions)];
      if (ctxJson === null) await tx.query(APPEND_LAST_SLICE_SQL, params);
      else await tx.query(APPEND_LAST_SLICE_WITH_CONTEXTS_SQL, [...params, ctxJson]);
    } else if (ctxJson === null) {
      await tx.query(INSERT_ROWS_SQL, [orgId, slice.value]);
    } else {
      await tx.query(INSERT_ROWS_WITH_CONTEXTS_SQL, [orgId, slice.value, ctxJson]);
    }
    slice = next;
  }
  return { orgId, firstSeq: lastSeq + 1, lastSeq: lastSeq + n, events: streamed };
}

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
  if (!row.tool_name) return null; // as payloadOf: a tool call without a tool name was not streamed live
  return toolCallPayload({
    occurredAt: new Date(row.occurred_at),
    serverId: row.server_id,
    sessionId: row.session_id,
    toolName: row.tool_name,
    action: row.action,
    latencyMs: row.latency_ms,
  });
}

/** Stored seq range (afterSeq, upToSeq] as stream events, oldest first; non-streamed rows are skipped but counted in the range. */
export async function readStreamRange(db: Queryable, orgId: string, afterSeq: number, upToSeq: number, limit: number): Promise<{ events: StreamEvent[]; firstSeq: number | null; lastSeq: number }> {
  const r = await db.query<StreamRow>(
    `SELECT seq, type, occurred_at, server_id, session_id, tool_name, action, latency_ms, CASE WHEN type <> 'tool_call' THEN payload END AS payload
     FROM audit_events WHERE org_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4`,
    [orgId, afterSeq, upToSeq, limit],
  );
  const events: StreamEvent[] = [];
  for (const row of r.rows) {
    if (!(STREAM_EVENT_TYPES as readonly string[]).includes(row.type)) continue;
    const payload = storedPayloadOf(row);
    if (payload) events.push({ seq: Number(row.seq), type: row.type, serverId: row.server_id, payload });
  }
  const lastSeq = r.rows.length === limit ? Number(r.rows[r.rows.length - 1].seq) : upToSeq;
  // The first stored seq of the range (null when none is): rows missing before it were removed by retention.
  return { events, firstSeq: r.rows.length ? Number(r.rows[0].seq) : null, lastSeq };
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
}


/**
 * The condition that lets a query of one organization use the filter indexes (session, server, tool, action, type;
 * source, migration 010), which lead with uuid_hash(org_id) (migration 006). `org` is the parameter holding the org
 * id; `alias` the table's.
 */
export function orgHashMatches(org: string, alias = ''): string {
  return `uuid_hash(${alias ? `${alias}.` : ''}org_id) = uuid_hash(${org}::uuid)`;
}

/** The WHERE conditions and parameters of a filter ($1 is the org id); null when its time range holds no event. */
export async function auditFilterSql(db: Queryable, orgId: string, f: AuditEventFilter | EventFilter): Promise<{ where: string[]; params: unknown[] } | null> {
  const where = ['org_id = $1', orgHashMatches('$1')];
  const params: unknown[] = [orgId];
  fieldConditions(f, '$1', where, params);
  if (!(await timeConditions(db, orgId, f, where, params))) return null;
  return { where, params };
}

export async function listAuditEvents(db: Queryable, orgId: string, f: AuditEventFilter): Promise<AuditEventRow[]> {
  const sql = await auditFilterSql(db, orgId, f);
  if (!sql) return [];
  const { where, params } = sql;
  if (f.afterSeq !== undefined) where.push(`seq > $${params.push(f.afterSeq)}`);
  if (f.beforeSeq !== undefined) where.push(`seq < $${params.push(f.beforeSeq)}`);
  params.push(f.limit);
  const r = await db.query<AuditEventDbRow>(
    `SELECT ${AUDIT_EVENT_COLUMNS}
     FROM audit_events WHERE ${where.join(' AND ')} ORDER BY seq ${f.order === 'asc' ? 'ASC' : 'DESC'} LIMIT $${params.length}`,
    params,
  );
  return r.rows.map(toAuditEventRow);
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

/**
 * The columns an API listing or export shows of an event (of audit_events, not aliased), in the order of
 * AuditEventDbRow; metadata with its batch's shared part put back (audit_event_metadata, migration 010).
 */
export const AUDIT_EVENT_COLUMNS = `seq, type, source, occurred_at, received_at, server_id, session_id, tool_name, action, latency_ms,
  CASE WHEN context_id IS NULL THEN metadata ELSE audit_event_metadata(metadata,
    (SELECT c.context FROM audit_contexts c WHERE c.org_id = audit_events.org_id AND c.id = audit_events.context_id)) END AS metadata`;

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

