// The rate-spike rule, pure: current rate over the window, baseline (clipped EWMA of past minutes), threshold and verdict.
import type { AnomalySettings } from './anomaly-schemas.js';
import { baselineMinutes, type RateObservation } from './rate-counter.js';

/** Smoothing factor of the baseline EWMA per minute (a minute's weight halves in about 6.6 minutes). */
export const BASELINE_ALPHA = 0.1;

export interface Evaluation {
  /** Calls per minute over the window: window count × 60 / windowSeconds. */
  currentRate: number;
  /** Recent normal rate of the key, calls per minute. */
  baseline: number;
  /** max(minRate, multiplier × baseline), calls per minute. */
  threshold: number;
  /** Calls counted in the window. */
  windowCount: number;
  /** Whether currentRate exceeds threshold. */
  spike: boolean;
}

export function ratePerMinute(count: number, windowSeconds: number): number {
  return (count * 60) / windowSeconds;
}

export function thresholdOf(baseline: number, s: Pick<AnomalySettings, 'minRate' | 'multiplier'>): number {
  return Math.max(s.minRate, s.multiplier * baseline);
}

/**
 * The baseline: an EWMA of per-minute counts over the BASELINE_MINUTES whole minutes before the window, starting at
 * the key's first minute with calls (later minutes without calls count as 0). Each minute is clipped at the threshold
 * in force before it, so a spike minute raises the baseline by at most a fraction α of the gap to the threshold
 * instead of becoming the new normal; a lasting increase is still learned, minute by minute.
 */
export function baselineOf(minuteCounts: Map<number, number>, nowMs: number, s: Pick<AnomalySettings, 'windowSeconds' | 'minRate' | 'multiplier'>): number {
  const { first, last } = baselineMinutes(nowMs, s.windowSeconds);
  let ewma: number | undefined;
  for (let m = first; m <= last; m++) {
    const count = minuteCounts.get(m);
    if (ewma === undefined) {
      if (count === undefined) continue;
      ewma = Math.min(count, thresholdOf(0, s));
      continue;
    }
    const clipped = Math.min(count ?? 0, thresholdOf(ewma, s));
    ewma += BASELINE_ALPHA * (clipped - ewma);
  }
  return ewma ?? 0;
}

/** Figures rounded for display and the event payload (two decimals); the verdict uses the exact values. */
export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

export function evaluate(obs: RateObservation, nowMs: number, s: AnomalySettings): Evaluation {
  const currentRate = ratePerMinute(obs.windowCount, s.windowSeconds);
  const baseline = baselineOf(obs.minuteCounts, nowMs, s);
  const threshold = thresholdOf(baseline, s);
  return { currentRate, baseline, threshold, windowCount: obs.windowCount, spike: currentRate > threshold };
}
