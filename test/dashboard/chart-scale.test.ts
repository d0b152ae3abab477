// The chart's scale through a burst: the other buckets keep a readable height; without a burst the peak sets the top.
import { describe, expect, it } from 'vitest';
import { chartScale } from '../../src/dashboard/chart-scale.js';

describe('chart scale', () => {
  it('clips one burst bucket so the rest of the hour stays readable', () => {
    const series = Array.from({ length: 60 }, (_, i) => (i === 41 ? 5000 : 8 + (i % 7)));
    const { top, clipped } = chartScale(series);
    expect(clipped).toEqual([41]);
    expect(top).toBeLessThanOrEqual(50);
    // The ordinary buckets fill more than a third of the height (at 5000 on top they were under 0.3 %).
    for (const [i, n] of series.entries()) if (i !== 41) expect(n / top).toBeGreaterThan(0.15);
  });

  it('keeps the peak as top when there is no burst, or when most buckets are high', () => {
    expect(chartScale([3, 5, 7, 9, 4, 6])).toEqual({ top: 10, clipped: [] });
    expect(chartScale([0, 0, 0, 0])).toEqual({ top: 1, clipped: [] });
    expect(chartScale([1, 900, 1000])).toEqual({ top: 1000, clipped: [] }); // too few buckets to call one a burst
    const steps = [1, 1, 1, 1, 1, 100, 100, 100, 100, 100];
    expect(chartScale(steps)).toEqual({ top: 100, clipped: [] }); // half the buckets high: not a burst
  });
});
