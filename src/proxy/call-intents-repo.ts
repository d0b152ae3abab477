// SQL for the intents of proxied calls: written (with the session's status checked in the same statement) before a
// call is forwarded, deleted once its record is stored, swept into `unknown` records when left behind.
import type { Queryable } from '../db/db.js';
import type { CallFacts } from './call-record.js';

/**
 * Writes the call's intent unless its session is suspended: one statement, one round trip, reading the session's
 * status as committed now, on whatever instance suspended it. Returns false (and writes nothing) for a suspended session.
 */
export async function writeIntentUnlessSuspended(db: Queryable, orgId: string, facts: CallFacts, sweepAfterMs: number): Promise<boolean> {
  const r = await db.query(
    `INSERT INTO proxy_call_intents (call_id, org_id, started_at, sweep_after, event)
     SELECT $1, $2, $3, now() + ($4::bigint * interval '1 millisecond'), $5::jsonb
     WHERE NOT EXISTS (SELECT 1 FROM agent_sessions WHERE org_id = $2 AND session_id = $6 AND status = 'suspended')`,
    [facts.callId, orgId, facts.startedAt, Math.ceil(sweepAfterMs), JSON.stringify(facts), facts.sessionId],
  );
  return r.rowCount === 1;
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

/** Intents past their sweep time, oldest first. */
export async function leftIntents(db: Queryable, limit: number): Promise<LeftIntent[]> {
  const r = await db.query<{ call_id: string; org_id: string; event: CallFacts | string }>(
    'SELECT call_id, org_id, event FROM proxy_call_intents WHERE sweep_after < now() ORDER BY sweep_after LIMIT $1',
    [limit],
  );
  return r.rows.map((row) => ({ callId: row.call_id, orgId: row.org_id, facts: typeof row.event === 'string' ? (JSON.parse(row.event) as CallFacts) : row.event }));
}
