// SQL for agent sessions: tracking sessions seen in tool calls, reading them, and changing their status.
import type { SessionRow } from '../contract/api-rows.js';
import type { SessionUpdatePayload } from '../contract/stream-payloads.js';
import type { Queryable } from '../db/db.js';

export type SessionStatus = SessionRow['status'];

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

export interface SessionActivity {
  sessionId: string;
  serverId: string | null;
  count: number;
  lastSeenAt: Date;
  /** Earliest call time of the batch; lastSeenAt when not given. */
  firstSeenAt?: Date;
  /** For a session this write creates: the timestamp of its session_update (created), stored as statusChangedAt. */
  createdAt?: Date;
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

/** The spec 2.3 payload of a session_update event. */
export function sessionUpdatePayload(sessionId: string, status: SessionStatus, at: Date): SessionUpdatePayload {
  return { type: 'session_update', sessionId, status, timestamp: at.toISOString() };
}
