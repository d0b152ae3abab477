// Time ranges as seq ranges: SQL bounds from audit_event_hours (per org, per hour of occurred_at: min and max seq).

const HOUR_MS = 3_600_000;

/** The audit_event_hours.hour of a time: whole hours since the epoch. */
export function hourOf(time: Date | number): number {
  return Math.floor((typeof time === 'number' ? time : time.getTime()) / HOUR_MS);
}

/**
 * A condition on `seq` that every event with occurred_at in [from, to) meets (either end optional): seq between the
 * smallest min_seq and the largest max_seq of the hours the range touches. Callers keep their occurred_at condition;
 * this one only lets Postgres walk a seq range instead of everything. A range with no stored hour matches nothing.
 * `param(value)` adds a query parameter and returns its placeholder; `orgParam` is the org id's placeholder.
 */
export function seqRangeOfTimes(orgParam: string, range: { from?: Date; to?: Date }, param: (v: unknown) => string): string {
  const cond = [`org_id = ${orgParam}`];
  if (range.from) cond.push(`hour >= ${param(hourOf(range.from))}`);
  if (range.to) cond.push(`hour <= ${param(hourOf(range.to))}`);
  const where = cond.join(' AND ');
  return `seq BETWEEN (SELECT coalesce(min(min_seq), 1) FROM audit_event_hours WHERE ${where})
    AND (SELECT coalesce(max(max_seq), 0) FROM audit_event_hours WHERE ${where})`;
}
