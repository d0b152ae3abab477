// Time ranges as seq ranges: bounds from audit_event_hours (per org, per hour of occurred_at: min and max seq).
import type { Queryable } from '../db/db.js';

const HOUR_MS = 3_600_000;

/** The audit_event_hours.hour of a time: whole hours since the epoch. */
export function hourOf(time: Date | number): number {
  return Math.floor((typeof time === 'number' ? time : time.getTime()) / HOUR_MS);
}

/**
 * The seq range [lo, hi] holding every stored event with occurred_at in [from, to) (either end optional), read first
 * so that the query using it is planned with the actual bounds (given as a subquery, Postgres guessed a narrow range
 * and sorted a bitmap scan of most of the organization). Null when no stored hour touches the range. Hours whose
 * events all have seqs above `upToSeq` are left out.
 */
export async function seqBoundsOfTimes(db: Queryable, orgId: string, range: { from?: Date; to?: Date }, upToSeq?: number): Promise<{ lo: number; hi: number } | null> {
  const r = await db.query<{ lo: number | null; hi: number | null }>(
    `SELECT min(min_seq) AS lo, max(max_seq) AS hi FROM audit_event_hours
     WHERE org_id = $1 AND hour >= $2 AND hour <= $3 AND min_seq <= $4`,
    [orgId, range.from ? hourOf(range.from) : -2_147_483_648, range.to ? hourOf(range.to) : 2_147_483_647, upToSeq ?? Number.MAX_SAFE_INTEGER],
  );
  const { lo, hi } = r.rows[0] ?? { lo: null, hi: null };
  return lo === null || hi === null ? null : { lo: Number(lo), hi: Number(hi) };
}
