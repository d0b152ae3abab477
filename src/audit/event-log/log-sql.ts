// The event log's SQL besides the rows: the organization's seq lock, what a write must know before it appends (stored
// identities, session statuses, stored contexts), and the bookkeeping after it (counter, servers, sessions, contexts).
import type { Queryable } from '../../db/db.js';
import type { SessionStatus, SessionUpsert } from '../../sessions/session-rules.js';
import { sessionStatusesSql, sessionUpsertsJson, upsertSessionsSql } from '../../sessions/sessions-repo.js';
import { NotFound } from '../../shared/domain-errors.js';

/**
 * Locks the org's counter row for the rest of the transaction and returns its last seq. Commit order = seq order.
 * FOR NO KEY UPDATE: appends (and retention) of one org still run one at a time, but a row that merely references the
 * organization (a proxy call's intent, a session, a key: their foreign key checks take FOR KEY SHARE) is not made to
 * wait for the append in flight, as FOR UPDATE would.
 */
export async function lockOrgSeq(tx: Queryable, orgId: string): Promise<number> {
  const r = await tx.query<{ event_seq: number }>('SELECT event_seq FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [orgId]);
  if (r.rows.length === 0) throw new NotFound('organization not found');
  return Number(r.rows[0].event_seq);
}

export interface StoredState {
  /** Hex digests of the given identities already stored. */
  existing: Set<string>;
  /** Status of the given sessions that exist. */
  statuses: Map<string, SessionStatus>;
  /** Id of each given context digest (hex) already stored. */
  contexts: Map<string, number>;
  /** The largest context id of the organization (0: none). */
  maxContextId: number;
}

/**
 * In one round trip, under the seq lock: which identity digests (hex) are stored, the given sessions' statuses, which
 * context digests are stored and the largest context id. One probe of the dedupe index per digest (LATERAL ... LIMIT
 * 1: with `= ANY(...)` and stale statistics the planner once scanned every row of the organization).
 */
export async function readStoredState(tx: Queryable, orgId: string, digests: string[], sessionIds: string[], contextDigests: string[]): Promise<StoredState> {
  const out: StoredState = { existing: new Set(), statuses: new Map(), contexts: new Map(), maxContextId: 0 };
  if (digests.length === 0 && sessionIds.length === 0 && contextDigests.length === 0) return out;
  const r = await tx.query<{ kind: 'k' | 's' | 'c' | 'm'; id: string; status: string | null }>(
    `SELECT 'k' AS kind, k.key AS id, NULL::text AS status FROM unnest($2::text[]) AS k(key)
     CROSS JOIN LATERAL (SELECT 1 FROM audit_events e WHERE e.org_id = $1 AND e.dedupe_key = decode(k.key, 'hex') LIMIT 1) AS hit
     UNION ALL ${sessionStatusesSql('$1', '$3')}
     UNION ALL SELECT 'c', encode(digest, 'hex'), id::text FROM audit_contexts WHERE org_id = $1 AND digest = ANY(SELECT decode(d, 'hex') FROM unnest($4::text[]) AS d)
     UNION ALL SELECT 'm', NULL, max(id)::text FROM audit_contexts WHERE org_id = $1 AND cardinality($4::text[]) > 0`,
    [orgId, digests, sessionIds, contextDigests],
  );
  for (const row of r.rows) {
    if (row.kind === 'k') out.existing.add(row.id);
    else if (row.kind === 's') out.statuses.set(row.id, row.status as SessionStatus);
    else if (row.kind === 'c') out.contexts.set(row.id, Number(row.status));
    else if (row.status !== null) out.maxContextId = Number(row.status);
  }
  return out;
}

/** A context a write used: new ones are inserted, stored ones get their last_seq raised. */
export interface ContextUse {
  id: number;
  digest: string;
  context: Record<string, unknown>;
  /** The largest seq stored with it (retention keeps a context until every event up to it is gone). */
  lastSeq: number;
}

/**
 * After the rows, in one statement: the counter moved to `lastSeq`, unseen servers registered (seen ones touched), the
 * session upserts of the session rules applied, the contexts used inserted or their last_seq raised.
 */
export async function recordBookkeeping(tx: Queryable, orgId: string, lastSeq: number, servers: string[], sessions: readonly SessionUpsert[], contexts: readonly ContextUse[]): Promise<void> {
  await tx.query(
    `WITH srv AS (
       INSERT INTO servers (org_id, server_id) SELECT $1, unnest($3::text[])
       ON CONFLICT (org_id, server_id) DO UPDATE SET last_seen_at = now()
     ), ses AS (
       ${upsertSessionsSql('$1', '$4')}
     ), ctx AS (
       INSERT INTO audit_contexts AS a (org_id, id, digest, context, last_seq)
       SELECT $1, c.id, decode(c.digest, 'hex'), c.context, c.last_seq FROM jsonb_to_recordset($5::jsonb) AS c(id int, digest text, context jsonb, last_seq bigint)
       ON CONFLICT (org_id, id) DO UPDATE SET last_seq = greatest(a.last_seq, excluded.last_seq)
     )
     UPDATE organizations SET event_seq = $2 WHERE id = $1`,
    [orgId, lastSeq, servers, sessionUpsertsJson(sessions), JSON.stringify(contexts.map((c) => ({ id: c.id, digest: c.digest, context: c.context, last_seq: c.lastSeq })))],
  );
}
