// The fixed windows of the aggregate endpoint and their buckets; shared by the server route and the dashboard.

export const STATS_WINDOWS = {
  '1h': { label: 'last hour', spanSeconds: 3600, bucketSeconds: 60 },
  '24h': { label: 'last 24 h', spanSeconds: 86_400, bucketSeconds: 900 },
} as const;

export type StatsWindow = keyof typeof STATS_WINDOWS;
export const STATS_WINDOW_NAMES = Object.keys(STATS_WINDOWS) as StatsWindow[];

/** Most anomalies one stats answer lists (newest first). */
export const STATS_ANOMALY_LIMIT = 50;

export interface BucketRange {
  bucketSeconds: number;
  /** Epoch-second index (start / bucketSeconds) of the oldest bucket; the newest is first + count - 1. */
  first: number;
  count: number;
  fromMs: number;
  toMs: number;
}

/**
 * The window's buckets at `nowMs`: aligned to multiples of the bucket length since the epoch (UTC), the bucket holding
 * now included, so [from, to) spans exactly `spanSeconds` and ends at the end of the current bucket.
 */
export function bucketRange(window: StatsWindow, nowMs: number): BucketRange {
  const { spanSeconds, bucketSeconds } = STATS_WINDOWS[window];
  const count = spanSeconds / bucketSeconds;
  const current = Math.floor(nowMs / 1000 / bucketSeconds);
  const first = current - count + 1;
  return { bucketSeconds, first, count, fromMs: first * bucketSeconds * 1000, toMs: (current + 1) * bucketSeconds * 1000 };
}

/** The bucket index of a time (ms), to compare with BucketRange.first. */
export function bucketOf(timeMs: number, bucketSeconds: number): number {
  return Math.floor(timeMs / 1000 / bucketSeconds);
}
