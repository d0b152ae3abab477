// SQL for retention: each organization's period, the expired seq prefix removed in bounded batches, and the session,
// server and shared metadata rows left without events.
import type { Queryable, Db } from '../db/db.js';
import { orgHashMatches } from '../audit/audit-repo.js';
import { lockOrgSeq } from '../audit/event-log/log-sql.js';
export { oldestStoredSeq as oldestSeq } from '../audit/audit-repo.js';

/** Sessions (and servers) checked per transaction under the org's seq lock. */
const ORPHAN_CHUNK = 500;

export interface RetainedOrg {
  orgId: string;
  days: number;
}

/** Organizations with a retention period in effect: their own, or `defaultDays` (AUDIT_RETENTION_DAYS) when not set. */
export async function retainedOrgs(db: Queryable, defaultDays: number | undefined): Promise<RetainedOrg[]> {
  const r = await db.query<{ id: string; days: number }>(
    `SELECT id, CASE WHEN retention_set THEN retention_days ELSE $1::int END AS days FROM organizations
     WHERE CASE WHEN retention_set THEN retention_days ELSE $1::int END IS NOT NULL ORDER BY id`,
    [defaultDays ?? null],
  );
  return r.rows.map((x) => ({ orgId: x.id, days: Number(x.days) }));
}

export interface OrgRetentionSetting {
  /** The organization's own period: a number of days, null for forever; undefined when it follows the default. */
  days: number | null | undefined;
}

export async function readOrgRetention(db: Queryable, orgId: string): Promise<OrgRetentionSetting | null> {
  const r = await db.query<{ retention_set: boolean; retention_days: number | null }>('SELECT retention_set, retention_days FROM organizations WHERE id = $1', [orgId]);
  if (r.rows.length === 0) return null;
  return { days: r.rows[0].retention_set ? r.rows[0].retention_days : undefined };
}

/** Sets the organization's own period (`days` null = forever), or with `undefined` returns it to the default. */
export async function writeOrgRetention(db: Queryable, orgId: string, days: number | null | undefined): Promise<boolean> {
  const r = await db.query('UPDATE organizations SET retention_set = $2, retention_days = $3 WHERE id = $1', [orgId, days !== undefined, days ?? null]);
  return r.rowCount === 1;
}

/**
 * Within seqs [lo, lo + span), the first event stored at or after `cutoff` (received_at), or null when all are older.
 * Retention removes a prefix of seqs ending before the first event still within the period, so what is kept stays
 * gapless.
 */
export async function firstKeptSeqIn(db: Queryable, orgId: string, lo: number, span: number, cutoff: Date): Promise<number | null> {
  const r = await db.query<{ seq: number }>(
    'SELECT seq FROM audit_events WHERE org_id = $1 AND seq >= $2 AND seq < $3 AND received_at >= $4 ORDER BY seq LIMIT 1',
    [orgId, lo, lo + span, cutoff.toISOString()],
  );
  return r.rows.length ? Number(r.rows[0].seq) : null;
}

/**
 * Records that retention removes every seq of the org up to `throughSeq` (audit_retention_marks, migration 012), before
 * it deletes them: readers announce a missing seq as removed only up to this mark.
 */
export async function raiseRetentionMark(db: Queryable, orgId: string, throughSeq: number): Promise<void> {
  await db.query(
    `INSERT INTO audit_retention_marks AS m (org_id, removed_through_seq) VALUES ($1, $2)
     ON CONFLICT (org_id) DO UPDATE SET removed_through_seq = greatest(m.removed_through_seq, excluded.removed_through_seq)`,
    [orgId, throughSeq],
  );
}

/**
 * Deletes the org's events with seq in [lo, hi) — only while `leaseSql` holds — and returns how many, and the sessions
 * and servers they named (candidates for removal once no event names them).
 */
export async function deleteSeqRange(
  db: Queryable,
  orgId: string,
  lo: number,
  hi: number,
  lease: { sql: string; params: unknown[] },
): Promise<{ removed: number; sessions: string[]; servers: string[] }> {
  const r = await db.query<{ n: number; sessions: string[] | null; servers: string[] | null }>(
    `WITH d AS (
       DELETE FROM audit_events WHERE org_id = $1 AND seq >= $2 AND seq < $3 AND ${lease.sql}
       RETURNING session_id, server_id
     )
     SELECT count(*)::int AS n, array_agg(DISTINCT session_id) FILTER (WHERE session_id IS NOT NULL) AS sessions,
            array_agg(DISTINCT server_id) FILTER (WHERE server_id IS NOT NULL) AS servers FROM d`,
    [orgId, lo, hi, ...lease.params],
  );
  const row = r.rows[0];
  return { removed: Number(row?.n ?? 0), sessions: row?.sessions ?? [], servers: row?.servers ?? [] };
}

/** Forgets the hours whose events all went (the seq map of time ranges). */
export async function deleteEmptyHours(db: Queryable, orgId: string, keptFromSeq: number): Promise<void> {
  await db.query('DELETE FROM audit_event_hours WHERE org_id = $1 AND max_seq < $2', [orgId, keptFromSeq]);
}

/**
 * Of the given sessions and servers, removes those no stored event names any more. Every event below `removedBelow` is
 * gone, so only seqs from it on are looked at: the index probes start past the dead entries a large removal leaves
 * until vacuum. Runs under the org's seq lock, so an event naming one cannot be stored between check and removal.
 */
export async function deleteOrphans(db: Db, orgId: string, removedBelow: number, sessions: string[], servers: string[]): Promise<{ sessions: number; servers: number }> {
  const out = { sessions: 0, servers: 0 };
  // In chunks, each its own short transaction: the org's seq lock (which its ingest waits for) is held briefly.
  for (let i = 0; i < Math.max(sessions.length, servers.length); i += ORPHAN_CHUNK) {
    const s = sessions.slice(i, i + ORPHAN_CHUNK);
    const v = servers.slice(i, i + ORPHAN_CHUNK);
    const n = await db.transaction(async (tx) => {
      await lockOrgSeq(tx, orgId);
      const a = await tx.query(
        `DELETE FROM agent_sessions s WHERE s.org_id = $1 AND s.session_id = ANY($2::text[])
         AND NOT EXISTS (SELECT 1 FROM audit_events e WHERE e.org_id = $1 AND ${orgHashMatches('$1', 'e')} AND audit_key_hash(e.session_id) = audit_key_hash(s.session_id) AND e.session_id = s.session_id AND e.seq >= $3)`,
        [orgId, s, removedBelow],
      );
      const b = await tx.query(
        `DELETE FROM servers v WHERE v.org_id = $1 AND v.server_id = ANY($2::text[])
         AND NOT EXISTS (SELECT 1 FROM audit_events e WHERE e.org_id = $1 AND ${orgHashMatches('$1', 'e')} AND audit_key_hash(e.server_id) = audit_key_hash(v.server_id) AND e.server_id = v.server_id AND e.seq >= $3)`,
        [orgId, v, removedBelow],
      );
      return { sessions: a.rowCount, servers: b.rowCount };
    });
    out.sessions += n.sessions;
    out.servers += n.servers;
  }
  return out;
}

/**
 * Removes the org's shared metadata rows (audit_contexts) no stored event uses any more: those whose last use was
 * below `removedBelow` (every event below it is gone, and an event's seq is never above its context's last_seq).
 * Under the org's seq lock, so no write raises a last_seq or reuses a context between check and removal.
 */
export async function deleteUnusedContexts(db: Db, orgId: string, removedBelow: number): Promise<number> {
  return db.transaction(async (tx) => {
    await lockOrgSeq(tx, orgId);
    const r = await tx.query('DELETE FROM audit_contexts WHERE org_id = $1 AND last_seq < $2', [orgId, removedBelow]);
    return r.rowCount;
  });
}

/** When the org's event `seq` was stored, or null when it is not stored. */
export async function receivedAtOf(db: Queryable, orgId: string, seq: number): Promise<Date | null> {
  const r = await db.query<{ received_at: Date | string }>('SELECT received_at FROM audit_events WHERE org_id = $1 AND seq = $2', [orgId, seq]);
  return r.rows.length ? new Date(r.rows[0].received_at) : null;
}
