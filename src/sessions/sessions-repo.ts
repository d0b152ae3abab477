// SQL for agent sessions: tracking sessions seen in tool calls, reading them, and changing their status.
import type { SessionRow } from '../contract/api-rows.js';
import type { Queryable } from '../db/db.js';
import type { SessionStatus, SessionUpsert } from './session-rules.js';

export type { SessionStatus } from './session-rules.js';

/** A session as the API answers it. */
export type { SessionRow };

interface DbSessionRow {
  session_id: string;
  server_id: string | null;
  status: SessionStatus;
  status_reason: string | null;
  status_changed_by: string | null;
  first_seen_at: Date | string;
  last_seen_at: Date | string;
  status_changed_at: Date | string;
  tool_call_count: number;
}

const COLUMNS = 'session_id, server_id, status, status_reason, status_changed_by, first_seen_at, last_seen_at, status_changed_at, tool_call_count';

function toSession(r: DbSessionRow): SessionRow {
  return {
    sessionId: r.session_id,
    serverId: r.server_id,
    status: r.status,
    statusReason: r.status_reason,
    statusChangedBy: r.status_changed_by,
    firstSeenAt: new Date(r.first_seen_at).toISOString(),
    lastSeenAt: new Date(r.last_seen_at).toISOString(),
    statusChangedAt: new Date(r.status_changed_at).toISOString(),
    toolCallCount: Number(r.tool_call_count),
  };
}

/**
 * The write path looks sessions up and records their activity inside its own statements (one round trip each while the
 * org's seq lock is held, which the ingest benchmark showed is what bounds throughput), so sessions supply SQL parts.
 */

/** A SELECT of (kind 's', session_id, status) for the org's sessions among `$ids` (a text[] parameter). */
export function sessionStatusesSql(org: string, ids: string): string {
  return `SELECT 's' AS kind, session_id AS id, status FROM agent_sessions WHERE org_id = ${org} AND session_id = ANY(${ids}::text[])`;
}

/**
 * An INSERT for a CTE that applies session upserts (`$activity`, the JSON of sessionUpsertsJson): creates unseen
 * sessions (statusChangedAt = the creation's session_update time), adds call counts and widens the seen times.
 */
export function upsertSessionsSql(org: string, activity: string): string {
  return `INSERT INTO agent_sessions (org_id, session_id, server_id, first_seen_at, last_seen_at, tool_call_count, status_changed_at)
       SELECT ${org}, a.session_id, a.server_id, a.first_seen, a.last_seen, a.n, coalesce(a.changed_at, now())
       FROM json_to_recordset(${activity}::json) AS a(session_id text, server_id text, first_seen timestamptz, last_seen timestamptz, n bigint, changed_at timestamptz)
       ON CONFLICT (org_id, session_id) DO UPDATE SET
         first_seen_at = least(agent_sessions.first_seen_at, excluded.first_seen_at),
         last_seen_at = greatest(agent_sessions.last_seen_at, excluded.last_seen_at),
         tool_call_count = agent_sessions.tool_call_count + excluded.tool_call_count,
         server_id = coalesce(agent_sessions.server_id, excluded.server_id)`;
}

/** The parameter upsertSessionsSql reads. */
export function sessionUpsertsJson(upserts: readonly SessionUpsert[]): string {
  return JSON.stringify(
    upserts.map((a) => ({
      session_id: a.sessionId,
      server_id: a.serverId,
      first_seen: a.firstSeenAt.toISOString(),
      last_seen: a.lastSeenAt.toISOString(),
      n: a.count,
      changed_at: a.createdAt?.toISOString() ?? null,
    })),
  );
}

export async function getSession(db: Queryable, orgId: string, sessionId: string, forUpdate = false): Promise<SessionRow | undefined> {
  const r = await db.query<DbSessionRow>(
    `SELECT ${COLUMNS} FROM agent_sessions WHERE org_id = $1 AND session_id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [orgId, sessionId],
  );
  return r.rows[0] ? toSession(r.rows[0]) : undefined;
}

/** Sets a session's status; `at` (default: the database's now()) is also the timestamp of the session_update event. */
export async function setSessionStatus(tx: Queryable, orgId: string, sessionId: string, status: SessionStatus, reason: string | null, by: string, at?: Date): Promise<SessionRow> {
  const r = await tx.query<DbSessionRow>(
    `UPDATE agent_sessions SET status = $3, status_reason = $4, status_changed_by = $5, status_changed_at = coalesce($6::timestamptz, now())
     WHERE org_id = $1 AND session_id = $2 RETURNING ${COLUMNS}`,
    [orgId, sessionId, status, reason, by, at ? at.toISOString() : null],
  );
  return toSession(r.rows[0]);
}

/** Locks and returns the given sessions of an org that are active now (sessions unseen or already suspended are left out). */
export async function lockActiveSessions(tx: Queryable, orgId: string, sessionIds: string[]): Promise<SessionRow[]> {
  if (sessionIds.length === 0) return [];
  const r = await tx.query<DbSessionRow>(
    `SELECT ${COLUMNS} FROM agent_sessions WHERE org_id = $1 AND session_id = ANY($2::text[]) AND status = 'active'
     ORDER BY session_id FOR UPDATE`,
    [orgId, sessionIds],
  );
  return r.rows.map(toSession);
}

export interface SessionListFilter {
  status?: SessionStatus;
  serverId?: string;
  /** keyset cursor: sessions last seen before this (lastSeenAt, sessionId) */
  before?: { lastSeenAt: string; sessionId: string };
  limit: number;
}

export async function listSessions(db: Queryable, orgId: string, f: SessionListFilter): Promise<SessionRow[]> {
  const where = ['org_id = $1'];
  const params: unknown[] = [orgId];
  if (f.status) {
    params.push(f.status);
    where.push(`status = $${params.length}`);
  }
  if (f.serverId) {
    params.push(f.serverId);
    where.push(`server_id = $${params.length}`);
  }
  if (f.before) {
    params.push(f.before.lastSeenAt, f.before.sessionId);
    where.push(`(last_seen_at, session_id) < ($${params.length - 1}::timestamptz, $${params.length})`);
  }
  params.push(f.limit);
  const r = await db.query<DbSessionRow>(
    `SELECT ${COLUMNS} FROM agent_sessions WHERE ${where.join(' AND ')} ORDER BY last_seen_at DESC, session_id DESC LIMIT $${params.length}`,
    params,
  );
  return r.rows.map(toSession);
}
