// Unit tests of the pure session rules: creation, suspended flagging, activity, transitions and the session_update builder.
import { describe, expect, it } from 'vitest';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { Conflict } from '../../src/shared/domain-errors.js';
import { applySessionRules, nextStatus, sessionUpdateEvent, sessionsOf, type SessionStatus } from '../../src/sessions/session-rules.js';

const at = (m: number) => new Date(Date.UTC(2024, 4, 1, 10, m));
const call = (n: number, sessionId: string | null, occurredAt = at(n)): NewAuditEvent => ({
  type: 'tool_call', source: 'raw', occurredAt, serverId: 'srv', sessionId, toolName: `t${n}`, metadata: { n }, dedupeKey: `raw:id:${n}`,
});
const now = at(59);

describe('applySessionRules', () => {
  it('creates an unseen session with a session_update at `now` just before its first call, and counts its calls', () => {
    const incoming = [call(1, null), call(2, 'new'), call(3, 'new', at(0))];
    const r = applySessionRules(new Map(), incoming, now);
    expect(r.created).toEqual(['new']);
    expect(r.events.map((e) => e.type)).toEqual(['tool_call', 'session_update', 'tool_call', 'tool_call']);
    const update = r.events[1];
    expect(update).toMatchObject({ source: 'system', occurredAt: now, sessionId: 'new', serverId: 'srv', metadata: { transition: 'created', by: 'system' } });
    expect(r.origins).toEqual([0, -1, 1, 2]);
    expect(r.upserts).toEqual([{ sessionId: 'new', serverId: 'srv', count: 2, firstSeenAt: at(0), lastSeenAt: at(2), createdAt: now }]);
  });

  it('flags calls of a suspended session, adds activity to known sessions, and creates nothing for them', () => {
    const existing = new Map<string, SessionStatus>([['s', 'suspended'], ['a', 'active']]);
    const incoming = [call(1, 's'), call(2, 'a')];
    const r = applySessionRules(existing, incoming, now);
    expect(r.created).toEqual([]);
    expect(r.events.map((e) => e.metadata)).toEqual([{ n: 1, sessionSuspended: true }, { n: 2 }]);
    expect(incoming[0].metadata).toEqual({ n: 1 });
    expect(r.upserts.map((u) => [u.sessionId, u.count, u.createdAt])).toEqual([['s', 1, null], ['a', 1, null]]);
  });

  it('leaves events other than tool calls with a session alone', () => {
    const log: NewAuditEvent = { ...call(1, 'x'), type: 'log' };
    const r = applySessionRules(new Map(), [log], now);
    expect(r).toEqual({ events: [log], upserts: [], created: [], origins: [0] });
    expect(sessionsOf([log, call(2, 'y'), call(3, 'y'), call(4, null)])).toEqual(['y']);
  });

  it('gives every session_update a dedupe key of its own, so two real changes are never merged', () => {
    const a = applySessionRules(new Map(), [call(1, 'same')], now).events[0];
    const b = applySessionRules(new Map(), [call(1, 'same')], now).events[0];
    expect(a.dedupeKey).toMatch(/^session:same:created:/);
    expect(a.dedupeKey).not.toBe(b.dedupeKey);
    const change = { sessionId: 'same', serverId: null, name: 'suspended', status: 'suspended', at: now, source: 'operator', by: 'user:a@b.c', reason: null } as const;
    expect(sessionUpdateEvent(change).dedupeKey).not.toBe(sessionUpdateEvent(change).dedupeKey);
    expect(sessionUpdateEvent(change).metadata).toEqual({ transition: 'suspended', by: 'user:a@b.c', reason: null });
  });
});

describe('nextStatus', () => {
  it('suspends an active session and resumes a suspended one', () => {
    expect(nextStatus('s', 'active', 'suspend')).toBe('suspended');
    expect(nextStatus('s', 'suspended', 'resume')).toBe('active');
  });
  it('is a Conflict carrying the current status otherwise', () => {
    expect(() => nextStatus('s', 'suspended', 'suspend')).toThrow(Conflict);
    try {
      nextStatus('s', 'active', 'resume');
    } catch (err) {
      expect((err as Conflict).options.details).toEqual({ status: 'active' });
      expect((err as Conflict).message).toBe('session s is not suspended (it is active)');
    }
  });
});
