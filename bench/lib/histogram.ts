// A sparse latency histogram (0.05 ms buckets, negative values allowed) that worker processes build and the runner merges.
const SCALE = 20;

export type HistogramData = [number, number][];

export class Histogram {
  private readonly buckets = new Map<number, number>();
  count = 0;

  record(ms: number, times = 1): void {
    const k = Math.round(ms * SCALE);
    this.buckets.set(k, (this.buckets.get(k) ?? 0) + times);
    this.count += times;
  }

  merge(data: HistogramData): void {
    for (const [k, n] of data) {
      this.buckets.set(k, (this.buckets.get(k) ?? 0) + n);
      this.count += n;
    }
  }

  toJSON(): HistogramData {
    return [...this.buckets.entries()];
  }

  /** The value at quantile q (0..1), in ms; NaN when empty. */
  quantile(q: number): number {
    if (this.count === 0) return NaN;
    const keys = [...this.buckets.keys()].sort((a, b) => a - b);
    const rank = Math.max(1, Math.ceil(q * this.count));
    let seen = 0;
    for (const k of keys) {
      seen += this.buckets.get(k)!;
      if (seen >= rank) return k / SCALE;
    }
    return keys[keys.length - 1] / SCALE;
  }

  max(): number {
    if (this.count === 0) return NaN;
    let m = -Infinity;
    for (const k of this.buckets.keys()) if (k > m) m = k;
    return m / SCALE;
  }

  summary(): { count: number; p50: number; p99: number; max: number } {
    return { count: this.count, p50: this.quantile(0.5), p99: this.quantile(0.99), max: this.max() };
  }
}
