// The figures of the chosen window: the server's snapshot (as of a seq) plus the live calls after that seq, sliding with the clock.
import { ACTION_KEYS, actionKey, type ActionKey } from '../audit/action-keys.js';
import { bucketOf, bucketRange, STATS_WINDOWS, type BucketRange, type StatsWindow } from '../audit/stats-windows.js';
import type { StatsSnapshot } from './api.js';

export type Counts = Record<ActionKey, number>;

export interface LiveCall {
  seq: number;
  timestamp: string | null;
  action: string | null;
}

/** Live calls kept for the next snapshot; past this many the page asks for a snapshot at once. */
const MAX_PENDING = 50_000;

const zero = (): Counts => Object.fromEntries(ACTION_KEYS.map((a) => [a, 0])) as Counts;

export class WindowFigures {
  window: StatsWindow = '1h';
  range: BucketRange = bucketRange('1h', Date.now());
  /** The last seq the snapshot includes; -1 until one is loaded. */
  asOfSeq = -1;
  sessions = { seen: 0, active: 0, suspended: 0 };
  private buckets = new Map<number, Counts>();
  /** Calls streamed with a seq above the snapshot's, oldest first: applied now, and again on top of the next snapshot. */
  private pending: LiveCall[] = [];

  constructor(private readonly wantSnapshot: () => void) {}

  setWindow(window: StatsWindow): void {
    this.window = window;
    this.range = bucketRange(window, Date.now());
    this.asOfSeq = -1;
    this.buckets.clear();
    this.sessions = { seen: 0, active: 0, suspended: 0 };
  }

  /** Forgets everything, live calls included (sign-out, another organization). */
  reset(): void {
    this.pending = [];
    this.setWindow(this.window);
  }

  load(s: StatsSnapshot): void {
    if (s.window !== this.window) return; // an answer for a window no longer shown
    const bucketSeconds = s.bucketSeconds;
    const first = bucketOf(Date.parse(s.from), bucketSeconds);
    this.range = { bucketSeconds, first, count: s.buckets.length, fromMs: Date.parse(s.from), toMs: Date.parse(s.to) };
    this.buckets.clear();
    s.buckets.forEach((b, i) => {
      const counts = zero();
      for (const a of ACTION_KEYS) counts[a] = Number(b.counts[a] ?? 0);
      this.buckets.set(first + i, counts);
    });
    this.asOfSeq = s.asOfSeq;
    this.sessions = { ...s.sessions };
    this.pending = this.pending.filter((c) => c.seq > s.asOfSeq);
    for (const c of this.pending) this.apply(c);
    this.slide(Date.now());
  }

  /** A streamed tool call: counted when it is newer than the snapshot and its timestamp falls in the window. */
  addCall(c: LiveCall): void {
    if (this.asOfSeq >= 0 && c.seq <= this.asOfSeq) return;
    this.pending.push(c);
    if (this.pending.length > MAX_PENDING) {
      this.pending.splice(0, this.pending.length - MAX_PENDING);
      this.wantSnapshot();
    }
    if (this.asOfSeq >= 0) this.apply(c);
  }

  /** Moves the window to `nowMs`: buckets that left it are dropped, new ones start empty. */
  slide(nowMs: number): void {
    const next = bucketRange(this.window, nowMs);
    if (next.first <= this.range.first) return;
    this.range = next;
    for (const b of this.buckets.keys()) if (b < next.first) this.buckets.delete(b);
  }

  counts(): Counts {
    const out = zero();
    for (const c of this.buckets.values()) for (const a of ACTION_KEYS) out[a] += c[a];
    return out;
  }

  /** Calls per bucket, oldest first, one entry per bucket of the window. */
  series(): number[] {
    return Array.from({ length: this.range.count }, (_, i) => {
      const c = this.buckets.get(this.range.first + i);
      return c ? ACTION_KEYS.reduce((n, a) => n + c[a], 0) : 0;
    });
  }

  get label(): string {
    return STATS_WINDOWS[this.window].label;
  }

  private apply(c: LiveCall): void {
    this.slide(Date.now());
    const t = c.timestamp ? Date.parse(c.timestamp) : NaN;
    if (Number.isNaN(t)) return;
    const b = bucketOf(t, this.range.bucketSeconds);
    if (b < this.range.first || b >= this.range.first + this.range.count) return;
    let counts = this.buckets.get(b);
    if (!counts) this.buckets.set(b, (counts = zero()));
    counts[actionKey(c.action)]++;
  }
}
