// The RateCounter interface (Redis and in-process backends) and the bucket arithmetic both backends share.

/** Calls of one key that arrived together: counted once per key per committed batch. */
export interface RecordInput {
  /** Arrival time (ms since epoch) of the calls, by the detector's clock. */
  nowMs: number;
  count: number;
  windowSeconds: number;
  /** Session ids of these calls (already capped at MAX_TRACKED_SESSIONS). */
  sessions: string[];
}

export interface RateObservation {
  /** Calls of the key within the sliding window that ends now, these included. */
  windowCount: number;
  /** Calls per epoch minute (Math.floor(ms / 60000)), for the minutes the baseline is computed from and later ones. */
  minuteCounts: Map<number, number>;
}

/**
 * Shared counting state of the detector. Every instance of a deployment must see the same counts, so the Redis
 * backend keeps them in Redis and the in-process one serves the single embedded instance.
 */
export interface RateCounter {
  readonly kind: 'redis' | 'memory';
  // Keys begin with the organization id and a ':' (counterKey): on a Redis Cluster that part is their hash tag.
  /** Adds calls to a key (and remembers their sessions), then reads the window count and the minute history. */
  record(key: string, input: RecordInput): Promise<RateObservation>;
  /** Sessions seen for the key within the window (at most MAX_TRACKED_SESSIONS, most recent first). */
  recentSessions(key: string, nowMs: number, windowSeconds: number): Promise<string[]>;
  /**
   * The alert gate of a key: true for exactly one caller (across instances) when no alert was let through in the last
   * cooldownMs; that caller emits the alert.
   */
  tryOpenAlertGate(key: string, nowMs: number, cooldownMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Minutes of history the baseline is computed from. */
export const BASELINE_MINUTES = 60;
/** Sessions remembered per key within the window; the anomaly names (and may suspend) at most this many. */
export const MAX_TRACKED_SESSIONS = 100;
/** How long a gate is kept at least, so a cooldown lengthened later still finds the last alert. */
export const GATE_RETENTION_MS = 3_600_000;

/** Window buckets: 1 s up to a 60 s window, so a window never spans more than about 60 buckets. */
export function bucketSeconds(windowSeconds: number): number {
  return Math.max(1, Math.ceil(windowSeconds / 60));
}

/** The bucket layout of a window ending at nowMs: the current bucket, and the oldest bucket still counted. */
export function windowBuckets(nowMs: number, windowSeconds: number): { current: number; first: number } {
  const size = bucketSeconds(windowSeconds);
  const nowSec = Math.floor(nowMs / 1000);
  const floorTo = (s: number) => s - (((s % size) + size) % size);
  return { current: floorTo(nowSec), first: floorTo(nowSec - windowSeconds + 1) };
}

/**
 * The minutes of the baseline: the BASELINE_MINUTES whole minutes that ended before the window began, so the calls
 * being judged never count towards the baseline they are judged against.
 */
export function baselineMinutes(nowMs: number, windowSeconds: number): { first: number; last: number } {
  const last = Math.floor((Math.floor(nowMs / 1000) - windowSeconds) / 60) - 1;
  return { first: last - BASELINE_MINUTES + 1, last };
}

export function minuteOf(nowMs: number): number {
  return Math.floor(nowMs / 60_000);
}

/** How long a key's counts must be kept: the window plus the baseline period, plus a minute of slack. */
export function retentionMs(windowSeconds: number): number {
  return (windowSeconds + (BASELINE_MINUTES + 2) * 60) * 1000;
}
