// Reads a latency value (number or numeric string, optionally suffixed "ms") as whole milliseconds.

/** Largest latency kept: the maximum of a Postgres `integer` column (about 24.8 days). */
export const MAX_LATENCY_MS = 2_147_483_647;

const NUMERIC_MS = /^\s*(\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*(?:ms)?\s*$/;

/** Rounded milliseconds, or null unless `value` is a finite, non-negative number (at most MAX_LATENCY_MS). */
export function parseLatencyMs(value: unknown): number | null {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && value.length <= 64 && NUMERIC_MS.test(value)) n = Number(value.trim().replace(/\s*ms$/, ''));
  else return null;
  if (!Number.isFinite(n) || n < 0) return null;
  const ms = Math.round(n);
  return ms <= MAX_LATENCY_MS ? ms : null;
}
