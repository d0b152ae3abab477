// The rate-spike rule on its own: rates per minute, the clipped EWMA baseline, the threshold and the strict comparison.
import { describe, expect, it } from 'vitest';
import { baselineOf, evaluate, ratePerMinute, thresholdOf } from '../../src/anomaly/detector.js';
import { baselineMinutes, bucketSeconds, windowBuckets } from '../../src/anomaly/rate-counter.js';
import type { AnomalySettings } from '../../src/anomaly/anomaly-schemas.js';

const settings: AnomalySettings = { windowSeconds: 60, minRate: 20, multiplier: 3, cooldownSeconds: 300, suspendSessionsOnSpike: false };
const NOW = Date.UTC(2024, 4, 1, 12, 0, 30);
const nowMinute = Math.floor(NOW / 60_000);

/** Minute counts for the `n` minutes before the window: count(i) for i = 0 (oldest) .. n-1. */
function history(n: number, count: (i: number) => number, now = NOW, windowSeconds = 60): Map<number, number> {
  const { last } = baselineMinutes(now, windowSeconds);
  const m = new Map<number, number>();
  for (let i = 0; i < n; i++) m.set(last - n + 1 + i, count(i));
  return m;
}

describe('rate-spike rule', () => {
  it('expresses rates as calls per minute over the window', () => {
    expect(ratePerMinute(12, 10)).toBe(72);
    expect(ratePerMinute(100, 60)).toBe(100);
    expect(ratePerMinute(30, 120)).toBe(15);
  });

  it('uses minRate while there is no baseline, then multiplier × baseline', () => {
    expect(baselineOf(new Map(), NOW, settings)).toBe(0);
    expect(thresholdOf(0, settings)).toBe(20);
    expect(thresholdOf(5, settings)).toBe(20);
    expect(thresholdOf(50, settings)).toBe(150);
  });

  it('learns a steady rate as the baseline', () => {
    const b = baselineOf(history(60, () => 100), NOW, settings);
    expect(b).toBeGreaterThan(99);
    expect(b).toBeLessThanOrEqual(100);
    expect(evaluate({ windowCount: 250, minuteCounts: history(60, () => 100) }, NOW, settings)).toMatchObject({ spike: false });
    const ev = evaluate({ windowCount: 320, minuteCounts: history(60, () => 100) }, NOW, settings);
    expect(ev.spike).toBe(true);
    expect(ev.currentRate).toBe(320);
    expect(ev.threshold).toBeCloseTo(3 * b, 6);
  });

  it('clips a spike minute, so it barely moves the baseline', () => {
    const steady = baselineOf(history(60, () => 100), NOW, settings);
    const spiked = baselineOf(history(60, (i) => (i === 59 ? 100_000 : 100)), NOW, settings);
    // At most α × (threshold - baseline) = 0.1 × (300 - 100) higher.
    expect(spiked - steady).toBeLessThanOrEqual(20.01);
  });

  it('still learns a lasting increase within minutes', () => {
    const b = baselineOf(history(60, (i) => (i < 30 ? 100 : 1000)), NOW, settings);
    expect(thresholdOf(b, settings)).toBeGreaterThan(1000);
  });

  it('counts minutes without calls as zero once the key has history, and ignores the minutes the window overlaps', () => {
    const sparse = new Map([[baselineMinutes(NOW, 60).first, 100]]);
    expect(baselineOf(sparse, NOW, settings)).toBeLessThan(1);
    // Calls in the current and previous minute are what is being judged: they are not part of the baseline.
    const recentOnly = new Map([
      [nowMinute, 10_000],
      [nowMinute - 1, 10_000],
    ]);
    expect(baselineOf(recentOnly, NOW, settings)).toBe(0);
    // History older than an hour before the window is ignored.
    const old = new Map([[baselineMinutes(NOW, 60).first - 1, 100]]);
    expect(baselineOf(old, NOW, settings)).toBe(0);
  });

  it('alerts only when the rate exceeds the threshold', () => {
    const s = { ...settings, windowSeconds: 10, minRate: 60 };
    expect(evaluate({ windowCount: 10, minuteCounts: new Map() }, NOW, s)).toMatchObject({ currentRate: 60, threshold: 60, spike: false });
    expect(evaluate({ windowCount: 11, minuteCounts: new Map() }, NOW, s)).toMatchObject({ currentRate: 66, threshold: 60, spike: true });
  });

  it('lays out window buckets of 1 s up to a minute, coarser beyond', () => {
    expect(bucketSeconds(10)).toBe(1);
    expect(bucketSeconds(60)).toBe(1);
    expect(bucketSeconds(600)).toBe(10);
    expect(bucketSeconds(3600)).toBe(60);
    const sec = Math.floor(NOW / 1000);
    expect(windowBuckets(NOW, 10)).toEqual({ current: sec, first: sec - 9 });
    const w = windowBuckets(NOW, 600);
    expect(w.current % 10).toBe(0);
    expect(w.current - w.first).toBeGreaterThanOrEqual(590);
  });
});
