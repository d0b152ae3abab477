// SQL for the intents of proxied calls: written (with the session's status checked in the same statement) before a
// call is forwarded, deleted once its record is stored, swept into `unknown` records when left behind.
import type { Queryable } from '../db/db.js';
import type { CallFacts } from './call-record.js';

export interface IntentToWrite {
  orgId: string;
  facts: CallFacts;
  sweepAfterMs: number;
}

/**
 * Writes calls' intents unless their session is suspended: one statement (one commit) for all of them, reading each
 * session's status as committed now, on whatever instance suspended it. Returns the call ids written; a call of a
 * suspended session is left out (nothing written for it).
 */
export async function writeIntentsUnlessSuspended(db: Queryable, intents: readonly IntentToWrite[]): Promise<Set<string>> {
  const rows = intents.map((i) => ({ call_id: i.facts.callId, org_id: i.orgId, started_at: i.facts.startedAt, sweep_ms: Math.ceil(i.sweepAfterMs), session_id: i.facts.sessionId, event: i.facts }));
  const r = await db.query<{ call_id: string }>(
    `INSERT INTO proxy_call_intents (call_id, org_id, started_at, sweep_after, event)
     SELECT i.call_id, i.org_id, i.started_at, now() + (i.sweep_ms * interval '1 millisecond'), i.event
     FROM jsonb_to_recordset($1::jsonb) AS i(call_id uuid, org_id uuid, started_at timestamptz, sweep_ms bigint, session_id text, event jsonb)
     WHERE NOT EXISTS (SELECT 1 FROM agent_sessions s WHERE s.org_id = i.org_id AND s.session_id = i.session_id AND s.status = 'suspended')
     RETURNING call_id`,
    [JSON.stringify(rows)],
  );
  return new Set(r.rows.map((x) => x.call_id));
}

/** The session's status now ('active', 'suspended'), or null when it has not been seen. */
export async function sessionStatus(db: Queryable, orgId: string, sessionId: string): Promise<string | null> {
  const r = await db.query<{ status: string }>('SELECT status FROM agent_sessions WHERE org_id = $1 AND session_id = $2', [orgId, sessionId]);
  return r.rows[0]?.status ?? null;
}

export async function deleteIntents(db: Queryable, callIds: string[]): Promise<void> {
  if (callIds.length) await db.query('DELETE FROM proxy_call_intents WHERE call_id = ANY($1::uuid[])', [callIds]);
}

export interface LeftIntent {
  callId: string;
  orgId: string;
  facts: CallFacts;
}

/** Intents past their sweep time, oldest first (of organizations that still exist: intents hold no foreign key). */
export async function leftIntents(db: Queryable, limit: number): Promise<LeftIntent[]> {
  const r = await db.query<{ call_id: string; org_id: string; event: CallFacts | string }>(
    `SELECT i.call_id, i.org_id, i.event FROM proxy_call_intents i
     WHERE i.sweep_after < now() AND EXISTS (SELECT 1 FROM organizations o WHERE o.id = i.org_id)
     ORDER BY i.sweep_after LIMIT $1`,
    [limit],
  );
  return r.rows.map((row) => ({ callId: row.call_id, orgId: row.org_id, facts: typeof row.event === 'string' ? (JSON.parse(row.event) as CallFacts) : row.event }));
}

/** Deletes intents past their sweep time whose organization is gone (nothing is left to record them in). */
export async function deleteOrphanIntents(db: Queryable): Promise<number> {
  const r = await db.query('DELETE FROM proxy_call_intents i WHERE i.sweep_after < now() AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = i.org_id)');
  return r.rowCount;
}
