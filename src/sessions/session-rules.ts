// Session rules, pure: what a stored batch does to sessions, which transitions apply, and the one session_update builder.
import { randomUUID } from 'node:crypto';
import type { NewAuditEvent } from '../audit/audit-types.js';
import type { AuditSource } from '../contract/event-sources.js';
import type { SessionUpdatePayload } from '../contract/stream-payloads.js';
import { Conflict } from '../shared/domain-errors.js';

export type SessionStatus = SessionUpdatePayload['status'];
export type Transition = 'suspend' | 'resume';
/** How a session_update names its change in the stored event's metadata. */
export type SessionChangeName = 'created' | 'suspended' | 'resumed';

/** Each transition: the status it applies to, the status it sets, and its name in the event's metadata. */
export const TRANSITIONS: Record<Transition, { from: SessionStatus; to: SessionStatus; name: SessionChangeName }> = {
  suspend: { from: 'active', to: 'suspended', name: 'suspended' },
  resume: { from: 'suspended', to: 'active', name: 'resumed' },
};

/** Who changes a session and why: an operator (user or API key) or the system (the anomaly detector). */
export interface TransitionActor {
  by: string;
  reason: string | null;
  source: Extract<AuditSource, 'operator' | 'system'>;
}

/** One change of a session's status, as announced by a session_update. */
export interface SessionChange {
  sessionId: string;
  serverId: string | null;
  name: SessionChangeName;
  status: SessionStatus;
  at: Date;
  source: Extract<AuditSource, 'operator' | 'system'>;
  by: string;
  /** Transitions carry a reason (null when none was given); creation has none. */
  reason?: string | null;
}

/**
 * The one builder of session_update events. The service makes these itself, so there is no sender identity to dedupe
 * by: each change gets a key of its own (session, change, a random id) and two real changes are never merged. Its
 * stream payload follows from the record (metadata.transition gives the status: src/audit/event-log/canonical-record.ts).
 */
export function sessionUpdateEvent(c: SessionChange): NewAuditEvent {
  return {
    type: 'session_update',
    source: c.source,
    occurredAt: c.at,
    sessionId: c.sessionId,
    serverId: c.serverId,
    metadata: c.reason === undefined ? { transition: c.name, by: c.by } : { transition: c.name, by: c.by, reason: c.reason },
    dedupeKey: `session:${c.sessionId}:${c.name}:${randomUUID()}`,
  };
}

/** The status `transition` sets on a session now in `current`; a Conflict (carrying the current status) when it does not apply. */
export function nextStatus(sessionId: string, current: SessionStatus, transition: Transition): SessionStatus {
  const t = TRANSITIONS[transition];
  if (current !== t.from) {
    const message = transition === 'suspend' ? `session ${sessionId} is already ${current}` : `session ${sessionId} is not suspended (it is ${current})`;
    throw new Conflict(message, { status: current });
  }
  return t.to;
}

/** What a stored batch adds to one session: calls, seen times, and (for a session it creates) its creation time. */
export interface SessionUpsert {
  sessionId: string;
  serverId: string | null;
  count: number;
  firstSeenAt: Date;
  lastSeenAt: Date;
  /** For a session this batch creates: the timestamp of its session_update (created), stored as statusChangedAt. */
  createdAt: Date | null;
}

export interface SessionRulesResult {
  /** The batch to append, in order: each new session's session_update just before its first tool call. */
  events: NewAuditEvent[];
  /** Session rows to insert or add activity to. */
  upserts: SessionUpsert[];
  /** Sessions the batch creates, in order. */
  created: string[];
  /** For each of `events`, the index in `incoming` of the event it is (or stands for), -1 for a session_update made here. */
  origins: number[];
}

const isSessionCall = (e: NewAuditEvent): e is NewAuditEvent & { sessionId: string } => e.type === 'tool_call' && !!e.sessionId;

/** The sessions whose status the rules need for `events`: those of its tool calls. */
export function sessionsOf(events: readonly NewAuditEvent[]): string[] {
  const ids = new Set<string>();
  for (const e of events) if (isSessionCall(e)) ids.add(e.sessionId);
  return [...ids];
}

/**
 * Applies the session rules to a batch about to be stored (already deduplicated), given the status of its sessions
 * that exist (`existing`; an absent id is an unseen session). The first tool call of an unseen session creates it as
 * active, announced by a session_update at `now` placed just before that call; tool calls of a suspended session are
 * stored with metadata.sessionSuspended = true. Every session of a tool call gets its calls counted and seen times.
 * Pure: `incoming` is not changed.
 */
export function applySessionRules(existing: ReadonlyMap<string, SessionStatus>, incoming: readonly NewAuditEvent[], now: Date): SessionRulesResult {
  const upserts = new Map<string, SessionUpsert>();
  const created: string[] = [];
  const events: NewAuditEvent[] = [];
  const origins: number[] = [];
  for (let i = 0; i < incoming.length; i++) {
    const e = incoming[i];
    if (!isSessionCall(e)) {
      events.push(e);
      origins.push(i);
      continue;
    }
    const u = upserts.get(e.sessionId);
    if (u) {
      u.count++;
      if (e.occurredAt > u.lastSeenAt) u.lastSeenAt = e.occurredAt;
      if (e.occurredAt < u.firstSeenAt) u.firstSeenAt = e.occurredAt;
    } else {
      const isNew = !existing.has(e.sessionId);
      upserts.set(e.sessionId, { sessionId: e.sessionId, serverId: e.serverId ?? null, count: 1, firstSeenAt: e.occurredAt, lastSeenAt: e.occurredAt, createdAt: isNew ? now : null });
      if (isNew) {
        created.push(e.sessionId);
        events.push(sessionUpdateEvent({ sessionId: e.sessionId, serverId: e.serverId ?? null, name: 'created', status: 'active', at: now, source: 'system', by: 'system' }));
        origins.push(-1);
      }
    }
    events.push(existing.get(e.sessionId) === 'suspended' ? { ...e, metadata: { ...e.metadata, sessionSuspended: true } } : e);
    origins.push(i);
  }
  return { events, upserts: [...upserts.values()], created, origins };
}
