// Session use cases: list and read sessions, and suspend/resume them as audited, streamed, serialized state changes.
import { randomUUID } from 'node:crypto';
import type { AuditSource, NewAuditEvent } from '../audit/audit-types.js';
import type { EventRecorder } from '../audit/record-events.js';
import type { Db, Queryable } from '../db/db.js';
import { ConflictError, NotFoundError } from '../http/errors.js';
import { encodeSessionCursor, type SessionCursor } from './session-schemas.js';
import { getSession, listSessions, sessionUpdatePayload, setSessionStatus, type SessionRow, type SessionStatus } from './sessions-repo.js';

export type Transition = 'suspend' | 'resume';

/** Each transition: the status it applies to, the status it sets, and its name in the event's metadata. */
export const TRANSITIONS: Record<Transition, { from: SessionStatus; to: SessionStatus; name: string }> = {
  suspend: { from: 'active', to: 'suspended', name: 'suspended' },
  resume: { from: 'suspended', to: 'active', name: 'resumed' },
};

/** Who changes a session and why: an operator (user or API key) or the system (the anomaly detector). */
export interface TransitionActor {
  by: string;
  reason: string | null;
  source: Extract<AuditSource, 'operator' | 'system'>;
}

/** The audit event of one transition: type session_update, streamed with the new status (spec 2.3). */
export function sessionUpdateEvent(session: SessionRow, transition: Transition, actor: TransitionActor, at: Date): NewAuditEvent {
  return {
    type: 'session_update',
    source: actor.source,
    occurredAt: at,
    sessionId: session.sessionId,
    serverId: session.serverId,
    metadata: { transition: TRANSITIONS[transition].name, by: actor.by, reason: actor.reason },
    dedupeKey: `session:${session.sessionId}:${TRANSITIONS[transition].name}:${randomUUID()}`,
    payload: sessionUpdatePayload(session.sessionId, TRANSITIONS[transition].to, at),
  };
}

/**
 * Applies `transition` to a session already locked in `tx` (whose status it applies to) and returns the updated
 * session with its event. The caller appends the event in the same transaction.
 */
export async function applyTransition(tx: Queryable, orgId: string, session: SessionRow, transition: Transition, actor: TransitionActor, at: Date): Promise<{ session: SessionRow; event: NewAuditEvent }> {
  const updated = await setSessionStatus(tx, orgId, session.sessionId, TRANSITIONS[transition].to, actor.reason, actor.by, at);
  return { session: updated, event: sessionUpdateEvent(updated, transition, actor, at) };
}

export interface SessionListQuery {
  status?: SessionStatus;
  serverId?: string;
  limit: number;
  cursor?: SessionCursor;
}

export function createSessionService(deps: { db: Db; recorder: EventRecorder }) {
  async function list(orgId: string, q: SessionListQuery): Promise<{ items: SessionRow[]; nextCursor: string | null }> {
    const items = await listSessions(deps.db, orgId, { status: q.status, serverId: q.serverId, before: q.cursor, limit: q.limit });
    const last = items[items.length - 1];
    const nextCursor = items.length === q.limit && last ? encodeSessionCursor({ lastSeenAt: last.lastSeenAt, sessionId: last.sessionId }) : null;
    return { items, nextCursor };
  }

  async function get(orgId: string, sessionId: string): Promise<SessionRow> {
    const s = await getSession(deps.db, orgId, sessionId);
    if (!s) throw new NotFoundError(`session ${sessionId} not found`);
    return s;
  }

  /**
   * Suspends or resumes a session: 404 when unknown, 409 (with the current status) when the transition does not apply.
   * Runs under the org's seq lock, so two concurrent transitions of one session serialize and only one can win.
   */
  async function transition(orgId: string, sessionId: string, t: Transition, actor: TransitionActor): Promise<SessionRow> {
    return deps.recorder.recordWith(orgId, async (tx) => {
      const current = await getSession(tx, orgId, sessionId, true);
      if (!current) throw new NotFoundError(`session ${sessionId} not found`);
      if (current.status !== TRANSITIONS[t].from) {
        const message = t === 'suspend' ? `session ${sessionId} is already ${current.status}` : `session ${sessionId} is not suspended (it is ${current.status})`;
        throw new ConflictError(message, { status: current.status });
      }
      const { session, event } = await applyTransition(tx, orgId, current, t, actor, new Date());
      return { events: [event], result: session };
    });
  }

  return { list, get, transition };
}

export type SessionService = ReturnType<typeof createSessionService>;
