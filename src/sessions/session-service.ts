// Session use cases: list and read sessions, and suspend/resume them as audited, streamed, serialized state changes.
import type { NewAuditEvent } from '../audit/audit-types.js';
import type { EventLog } from '../audit/event-log/event-log.js';
import type { Db, Queryable } from '../db/db.js';
import { NotFound } from '../shared/domain-errors.js';
import { encodeSessionCursor, type SessionCursor } from './session-schemas.js';
import { TRANSITIONS, nextStatus, sessionUpdateEvent, type SessionStatus, type Transition, type TransitionActor } from './session-rules.js';
import { getSession, listSessions, lockActiveSessions, setSessionStatus, type SessionRow } from './sessions-repo.js';

export type { Transition, TransitionActor } from './session-rules.js';

/**
 * Applies `transition` to a session already locked in `tx` and returns the updated session with its session_update;
 * the caller appends the event in the same transaction. A Conflict when the transition does not apply.
 */
async function applyTransition(tx: Queryable, orgId: string, session: SessionRow, transition: Transition, actor: TransitionActor, at: Date): Promise<{ session: SessionRow; event: NewAuditEvent }> {
  const status = nextStatus(session.sessionId, session.status, transition);
  const updated = await setSessionStatus(tx, orgId, session.sessionId, status, actor.reason, actor.by, at);
  const event = sessionUpdateEvent({ sessionId: updated.sessionId, serverId: updated.serverId, name: TRANSITIONS[transition].name, status, at, source: actor.source, by: actor.by, reason: actor.reason });
  return { session: updated, event };
}

/**
 * Suspends those of `sessionIds` that are active now (locking them in `tx`, which holds the org's seq lock) and returns
 * their ids and session_updates, for the caller to append in the same transaction.
 */
export async function suspendActiveSessions(tx: Queryable, orgId: string, sessionIds: string[], actor: TransitionActor, at: Date): Promise<{ suspended: string[]; events: NewAuditEvent[] }> {
  const active = await lockActiveSessions(tx, orgId, sessionIds);
  const events: NewAuditEvent[] = [];
  for (const session of active) events.push((await applyTransition(tx, orgId, session, 'suspend', actor, at)).event);
  return { suspended: active.map((s) => s.sessionId), events };
}

export interface SessionListQuery {
  status?: SessionStatus;
  serverId?: string;
  limit: number;
  cursor?: SessionCursor;
}

export function createSessionService(deps: { db: Db; eventLog: EventLog }) {
  async function list(orgId: string, q: SessionListQuery): Promise<{ items: SessionRow[]; nextCursor: string | null }> {
    const items = await listSessions(deps.db, orgId, { status: q.status, serverId: q.serverId, before: q.cursor, limit: q.limit });
    const last = items[items.length - 1];
    const nextCursor = items.length === q.limit && last ? encodeSessionCursor({ lastSeenAt: last.lastSeenAt, sessionId: last.sessionId }) : null;
    return { items, nextCursor };
  }

  async function get(orgId: string, sessionId: string): Promise<SessionRow> {
    const s = await getSession(deps.db, orgId, sessionId);
    if (!s) throw new NotFound(`session ${sessionId} not found`);
    return s;
  }

  /**
   * Suspends or resumes a session: NotFound when unknown, Conflict (with the current status) when the transition does
   * not apply. Runs under the org's seq lock, so two concurrent transitions of one session serialize and only one wins.
   */
  async function transition(orgId: string, sessionId: string, t: Transition, actor: TransitionActor): Promise<SessionRow> {
    const { result } = await deps.eventLog.appendChecked(orgId, async (tx) => {
      const current = await getSession(tx, orgId, sessionId, true);
      if (!current) throw new NotFound(`session ${sessionId} not found`);
      const { session, event } = await applyTransition(tx, orgId, current, t, actor, new Date());
      return { events: [event], result: session };
    });
    return result;
  }

  return { list, get, transition };
}

export type SessionService = ReturnType<typeof createSessionService>;
