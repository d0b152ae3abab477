// The chart's y scale: linear up to a top that a burst does not set, so the buckets around it stay readable (the burst's bars are clipped and labelled).

/** The smallest of 1, 2, 5, 10, 20, 50... that is at least n. */
export function niceCeil(n: number): number {
  let step = 1;
  for (;;) {
    for (const m of [1, 2, 5]) if (step * m >= n) return step * m;
    step *= 10;
  }
}

export interface ChartScale {
  /** The value at the top of the chart. */
  top: number;
  /** Indexes of the buckets above the top: drawn full height, marked clipped, their value written on them. */
  clipped: number[];
}

/** A bucket is a burst when it is more than this many times the usual busy bucket. */
const BURST_FACTOR = 4;

/**
 * The scale of `series`: the peak's, unless a few buckets (at most a tenth of the non-empty ones) are more than
 * BURST_FACTOR times the busiest of the others; then the top fits those others with room to spare and the few are clipped.
 */
export function chartScale(series: number[]): ChartScale {
  const peak = Math.max(0, ...series);
  const busy = series.filter((n) => n > 0).sort((a, b) => a - b);
  const plain: ChartScale = { top: niceCeil(Math.max(1, peak)), clipped: [] };
  if (busy.length < 4) return plain;
  const allowedBursts = Math.max(1, Math.floor(busy.length / 10));
  // The busiest bucket that is not one of the allowed bursts.
  const reference = busy[busy.length - 1 - allowedBursts];
  if (reference <= 0 || peak <= BURST_FACTOR * reference) return plain;
  const top = niceCeil(reference * 1.5);
  const clipped = series.flatMap((n, i) => (n > top ? [i] : []));
  return clipped.length <= allowedBursts ? { top, clipped } : plain;
}
