// The spike monitor on a driven clock over both counter backends: baseline-relative alerts, cooldown, backfills, two instances, failures.
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { AnomalySettings } from '../../src/anomaly/anomaly-schemas.js';
import { createMemoryRateCounter } from '../../src/anomaly/memory-rate-counter.js';
import type { RateCounter } from '../../src/anomaly/rate-counter.js';
import { createRedisRateCounter } from '../../src/anomaly/redis-rate-counter.js';
import { createSpikeMonitor, type SpikeAlert, type SpikeMonitor } from '../../src/anomaly/spike-monitor.js';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';

const redisUrl = process.env.TEST_REDIS_URL;
const kinds = redisUrl ? (['memory', 'redis'] as const) : (['memory'] as const);
const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const FAST: AnomalySettings = { windowSeconds: 10, minRate: 60, multiplier: 3, cooldownSeconds: 300, suspendSessionsOnSpike: false };

function calls(n: number, at: number, extra: Partial<NewAuditEvent> = {}): NewAuditEvent[] {
  return Array.from({ length: n }, (_, i) => ({
    type: 'tool_call',
    source: 'raw',
    occurredAt: new Date(at),
    serverId: 'srv-1',
    toolName: 'search',
    dedupeKey: `k-${i}`,
    ...extra,
  }));
}

describe.each(kinds)('spike monitor (%s)', (kind) => {
  const prefix = `as-test-${randomBytes(6).toString('hex')}:`;
  const counters: RateCounter[] = [];
  afterAll(async () => {
    await Promise.all(counters.map((c) => c.close()));
    if (kind !== 'redis') return;
    const r = new Redis(redisUrl!);
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    await r.quit();
  });

  /** `instances` monitors sharing the counting state (one Redis connection each), on one driven clock. */
  function setup(settings: AnomalySettings, instances = 1) {
    const clock = { now: T0 };
    const alerts: SpikeAlert[] = [];
    const memory = createMemoryRateCounter(20_000);
    const orgId = `org-${randomBytes(4).toString('hex')}`;
    const monitors: SpikeMonitor[] = Array.from({ length: instances }, () => {
      const counter = kind === 'redis' ? createRedisRateCounter({ target: { mode: 'standalone', url: redisUrl! }, prefix, logger: pino({ level: 'silent' }), maxKeys: 20_000 }) : memory;
      counters.push(counter);
      return createSpikeMonitor({
        counter,
        settingsOf: async () => settings,
        emit: async (a) => void alerts.push(a),
        logger: pino({ level: 'silent' }),
        now: () => clock.now,
      });
    });
    const observe = async (n: number, extra: Partial<NewAuditEvent> = {}, instance = 0) => {
      monitors[instance].observe(orgId, calls(n, clock.now, extra));
      await monitors[instance].idle();
    };
    return { clock, alerts, monitors, orgId, observe };
  }

  it('raises nothing for a steady rate, and judges a burst against multiplier × the learned baseline', async () => {
    const t = setup({ windowSeconds: 60, minRate: 150, multiplier: 3, cooldownSeconds: 300, suspendSessionsOnSpike: false });
    // 100 calls/min for 90 minutes: 10 calls every 6 s.
    for (let i = 0; i < 900; i++, t.clock.now += 6_000) await t.observe(10);
    expect(t.alerts).toEqual([]);
    // Twice the baseline stays under 3 × baseline.
    for (let i = 0; i < 10; i++, t.clock.now += 6_000) await t.observe(20);
    expect(t.alerts).toEqual([]);
    // Four times the baseline is a spike: one alert, with the threshold coming from the baseline, not minRate.
    for (let i = 0; i < 10; i++, t.clock.now += 6_000) await t.observe(40);
    expect(t.alerts).toHaveLength(1);
    const ev = t.alerts[0].evaluation;
    expect(ev.baseline).toBeGreaterThan(95);
    expect(ev.baseline).toBeLessThan(115);
    expect(ev.threshold).toBeCloseTo(3 * ev.baseline, 6);
    expect(ev.currentRate).toBeGreaterThan(ev.threshold);
    expect(t.alerts[0]).toMatchObject({ orgId: t.orgId, serverId: 'srv-1', toolName: 'search' });
  });

  it('alerts once per cooldown while a spike lasts', async () => {
    const t = setup({ ...FAST, cooldownSeconds: 120 });
    // 600 calls/min (10 per second) for 5 minutes on a key with no history.
    for (let i = 0; i < 300; i++, t.clock.now += 1_000) await t.observe(10);
    const at = t.alerts.map((a) => a.at.getTime() - T0);
    expect(at[0]).toBe(1_000); // 20 calls in the window: 120/min > 60
    for (let i = 1; i < at.length; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(120_000);
    expect(at.length).toBeGreaterThanOrEqual(2);
    expect(at.length).toBeLessThanOrEqual(3);
  });

  it('counts calls when they arrive, not by their timestamps, and leaves backfills of old logs out', async () => {
    const t = setup(FAST);
    await t.observe(1000, { occurredAt: new Date(T0 - 2 * 3_600_000) });
    expect(t.alerts).toEqual([]);
    // Late (forwarded 30 minutes after the fact) but live: counted now.
    await t.observe(11, { occurredAt: new Date(T0 - 30 * 60_000) });
    expect(t.alerts).toHaveLength(1);
    expect(t.alerts[0].evaluation).toMatchObject({ windowCount: 11, currentRate: 66, threshold: 60 });
  });

  it('shares counts between instances: a burst split across two alerts exactly once, with the figures of the whole', async () => {
    const t = setup(FAST, 2);
    await t.observe(6, {}, 0);
    expect(t.alerts).toEqual([]);
    await t.observe(6, {}, 1);
    expect(t.alerts).toHaveLength(1);
    expect(t.alerts[0].evaluation).toMatchObject({ windowCount: 12, currentRate: 72, threshold: 60, spike: true });
    // Many concurrent batches on both instances: still one alert (the cooldown holds across instances).
    for (let i = 0; i < 50; i++) t.monitors[i % 2].observe(t.orgId, calls(5, t.clock.now));
    await Promise.all(t.monitors.map((m) => m.idle()));
    expect(t.alerts).toHaveLength(1);
  });

  it('lets exactly one instance alert when both see the spike at once', async () => {
    const t = setup(FAST, 2);
    for (let i = 0; i < 40; i++) t.monitors[i % 2].observe(t.orgId, calls(3, t.clock.now));
    await Promise.all(t.monitors.map((m) => m.idle()));
    expect(t.alerts).toHaveLength(1);
    expect(t.alerts[0].evaluation.windowCount).toBeGreaterThan(10);
  });

  it('keeps servers and tools apart, and names the sessions of the spiking key', async () => {
    const t = setup(FAST);
    await t.observe(9, { sessionId: 'a' });
    await t.observe(9, { toolName: 'fetch', sessionId: 'b' });
    await t.observe(9, { serverId: 'srv-2', sessionId: 'c' });
    await t.observe(9, { serverId: null, sessionId: 'd' });
    expect(t.alerts).toEqual([]);
    t.clock.now += 1_000;
    await t.observe(2, { toolName: 'fetch', sessionId: 'e' });
    expect(t.alerts).toHaveLength(1);
    expect(t.alerts[0]).toMatchObject({ serverId: 'srv-1', toolName: 'fetch', sessions: ['b', 'e'] });
    expect(t.alerts[0].evaluation).toMatchObject({ windowCount: 11 });
  });
});

describe('spike monitor failures', () => {
  it('logs a counter failure and never throws into the caller', async () => {
    const lines: string[] = [];
    const out = new PassThrough();
    out.on('data', (c: Buffer) => lines.push(c.toString()));
    const logger = pino({ level: 'info' }, out);
    // Nothing listens on port 1: every Redis command fails.
    const counter = createRedisRateCounter({ target: { mode: 'standalone', url: 'redis://127.0.0.1:1' }, prefix: 'nowhere:', logger, maxKeys: 20_000 });
    const monitor = createSpikeMonitor({ counter, settingsOf: async () => FAST, emit: async () => undefined, logger, now: Date.now });
    expect(() => monitor.observe('org', calls(100, Date.now()))).not.toThrow();
    await monitor.idle();
    expect(lines.join('')).toContain('anomaly evaluation failed');
    await monitor.close();
    await counter.close();
  });
});
