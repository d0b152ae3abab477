// SQL for the aggregate view of a window: tool calls by bucket and action, session counters and recent anomalies.
import type { AnomalyPayload } from '../contract/stream-payloads.js';
import type { Queryable } from '../db/db.js';
import { ACTION_KEYS, type ActionKey } from './action-keys.js';
import { STATS_ANOMALY_LIMIT, type BucketRange } from './stats-windows.js';

export interface StatsBucket {
  start: string;
  counts: Record<ActionKey, number>;
  total: number;
}

export interface AuditStats {
  /** The organization's last seq when the figures were read: they include exactly the events up to it. */
  asOfSeq: number;
  buckets: StatsBucket[];
  actions: Record<ActionKey, number>;
  total: number;
  sessions: { seen: number; active: number; suspended: number };
  /** The latest anomalies of the window, newest first: their stream payload and seq. */
  anomalies: (AnomalyPayload & { seq: number })[];
}

const zeroCounts = (): Record<ActionKey, number> => Object.fromEntries(ACTION_KEYS.map((a) => [a, 0])) as Record<ActionKey, number>;

/**
 * One statement, so every figure comes from one snapshot (and asOfSeq with them: seqs commit in order, so the snapshot
 * holds exactly the events up to the counter it sees). Tool calls are counted from audit_call_minutes (per minute and
 * action, kept by triggers in the writing transactions: migration 008), sessions through the (org_id, status, last_seen_at) index, anomalies through the
 * partial (org_id, occurred_at) index of anomaly rows (migration 003).
 */
export async function readAuditStats(db: Queryable, orgId: string, range: BucketRange): Promise<AuditStats> {
  const from = new Date(range.fromMs).toISOString();
  const to = new Date(range.toMs).toISOString();
  // Buckets are whole minutes, so the window is exactly the minutes [fromMs, toMs) of audit_call_minutes.
  const params: unknown[] = [orgId, from, to, range.bucketSeconds, STATS_ANOMALY_LIMIT, Math.floor(range.fromMs / 60_000), Math.floor(range.toMs / 60_000)];
  const r = await db.query<{
    seq: string | number;
    calls: { b: string | number; a: ActionKey; n: string | number }[];
    anomalies: { seq: string | number; payload: AnomalyPayload }[];
    seen: string | number;
    active: string | number;
    suspended: string | number;
  }>(
    `WITH calls AS (
       SELECT (minute * 60) / $4::int AS b, action AS a, sum(calls) AS n
       FROM audit_call_minutes
       WHERE org_id = $1 AND minute >= $6 AND minute < $7
       GROUP BY 1, 2
     ), anomalies AS (
       SELECT seq, payload FROM audit_events
       WHERE org_id = $1 AND type = 'anomaly' AND occurred_at >= $2 AND occurred_at < $3
       ORDER BY occurred_at DESC, seq DESC LIMIT $5
     ), sessions AS (
       SELECT count(*) AS seen, count(*) FILTER (WHERE status = 'active') AS active, count(*) FILTER (WHERE status = 'suspended') AS suspended
       FROM agent_sessions WHERE org_id = $1 AND last_seen_at >= $2 AND last_seen_at < $3
     )
     SELECT (SELECT event_seq FROM organizations WHERE id = $1) AS seq,
            (SELECT coalesce(json_agg(json_build_object('b', b, 'a', a, 'n', n)), '[]'::json) FROM calls) AS calls,
            (SELECT coalesce(json_agg(json_build_object('seq', seq, 'payload', payload) ORDER BY seq DESC), '[]'::json) FROM anomalies) AS anomalies,
            s.seen, s.active, s.suspended
     FROM sessions s`,
    params,
  );
  const row = r.rows[0];
  const buckets: StatsBucket[] = Array.from({ length: range.count }, (_, i) => ({
    start: new Date((range.first + i) * range.bucketSeconds * 1000).toISOString(),
    counts: zeroCounts(),
    total: 0,
  }));
  const actions = zeroCounts();
  let total = 0;
  for (const c of row.calls) {
    const bucket = buckets[Number(c.b) - range.first];
    const n = Number(c.n);
    if (!bucket) continue; // cannot happen: the WHERE clause keeps calls inside the range
    bucket.counts[c.a] += n;
    bucket.total += n;
    actions[c.a] += n;
    total += n;
  }
  return {
    asOfSeq: Number(row.seq ?? 0),
    buckets,
    actions,
    total,
    sessions: { seen: Number(row.seen), active: Number(row.active), suspended: Number(row.suspended) },
    anomalies: row.anomalies.map((a) => ({ seq: Number(a.seq), ...a.payload })),
  };
}
