// The RateCounter backends (in process; Redis and a private Redis Cluster when TEST_REDIS_URL is set) on a driven
// clock: window, minutes, sessions, alert gate.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryRateCounter } from '../../src/anomaly/memory-rate-counter.js';
import { MAX_TRACKED_SESSIONS, minuteOf, type RateCounter } from '../../src/anomaly/rate-counter.js';
import { createRedisRateCounter } from '../../src/anomaly/redis-rate-counter.js';
import type { RedisTarget } from '../../src/shared/redis-target.js';
import { startPrivateRedisCluster, type PrivateRedisCluster } from '../helpers/private-redis-cluster.js';

const redisUrl = process.env.TEST_REDIS_URL;
const kinds = redisUrl ? (['memory', 'redis', 'redis-cluster'] as const) : (['memory'] as const);
const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

describe.each(kinds)('rate counter (%s)', (kind) => {
  const prefix = `as-test-${randomBytes(6).toString('hex')}:`;
  const open: RateCounter[] = [];
  let cluster: PrivateRedisCluster | undefined;
  beforeAll(async () => {
    if (kind === 'redis-cluster') cluster = await startPrivateRedisCluster({ replicasPerMaster: 0 });
  });
  const target = (): RedisTarget =>
    kind === 'redis-cluster' ? { mode: 'cluster', seeds: cluster!.ports.map((port) => ({ host: '127.0.0.1', port, tls: false })) } : { mode: 'standalone', url: redisUrl! };
  const redisCounter = (keyPrefix: string, maxKeys: number) => createRedisRateCounter({ target: target(), prefix: keyPrefix, logger: pino({ level: 'silent' }), maxKeys });
  /** Keys matching a pattern, on the one Redis or on every node of the cluster. */
  const storedKeys = async (pattern: string): Promise<string[]> => {
    const ports = kind === 'redis-cluster' ? cluster!.ports : [null];
    const found: string[] = [];
    for (const port of ports) {
      const r = port === null ? new Redis(redisUrl!) : new Redis({ host: '127.0.0.1', port });
      found.push(...(await r.keys(pattern)));
      await r.quit();
    }
    return found;
  };
  /** A counter; for Redis each call is a separate connection, as two instances would have. */
  const counter = (): RateCounter => {
    const c = kind === 'memory' ? shared : redisCounter(prefix, 20_000);
    open.push(c);
    return c;
  };
  const shared = createMemoryRateCounter(20_000);
  const key = () => `org:${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    await Promise.all(open.map((c) => c.close()));
    await cluster?.stop();
    if (kind !== 'redis') return;
    const r = new Redis(redisUrl!);
    const keys = await r.keys(`${prefix}*`);
    if (keys.length) await r.del(...keys);
    await r.quit();
  });

  it('sums the calls of the sliding window and forgets older ones', async () => {
    const c = counter();
    const k = key();
    const rec = (ms: number, count: number) => c.record(k, { nowMs: T0 + ms, count, windowSeconds: 10, sessions: [] });
    expect((await rec(0, 5)).windowCount).toBe(5);
    expect((await rec(4_000, 3)).windowCount).toBe(8);
    expect((await rec(9_999, 1)).windowCount).toBe(9);
    // At +10 s the calls of second 0 have left the 10 s window.
    expect((await rec(10_000, 1)).windowCount).toBe(5);
    expect((await rec(30_000, 2)).windowCount).toBe(2);
  });

  it('keeps per-minute counts for the baseline', async () => {
    const c = counter();
    const k = key();
    for (let m = 0; m < 5; m++) await c.record(k, { nowMs: T0 + m * 60_000, count: 10 + m, windowSeconds: 10, sessions: [] });
    const obs = await c.record(k, { nowMs: T0 + 5 * 60_000, count: 1, windowSeconds: 10, sessions: [] });
    const m0 = minuteOf(T0);
    expect([...obs.minuteCounts].sort((a, b) => a[0] - b[0])).toEqual([
      [m0, 10],
      [m0 + 1, 11],
      [m0 + 2, 12],
      [m0 + 3, 13],
      [m0 + 4, 14],
      [m0 + 5, 1],
    ]);
    // Two hours later the old minutes are gone.
    const later = await c.record(k, { nowMs: T0 + 125 * 60_000, count: 1, windowSeconds: 10, sessions: [] });
    expect([...later.minuteCounts.keys()]).toEqual([m0 + 125]);
  });

  it('counts keys independently and shares counts between connections', async () => {
    const [c1, c2] = [counter(), counter()];
    const [k1, k2] = [key(), key()];
    await c1.record(k1, { nowMs: T0, count: 4, windowSeconds: 10, sessions: [] });
    expect((await c2.record(k1, { nowMs: T0 + 1, count: 4, windowSeconds: 10, sessions: [] })).windowCount).toBe(8);
    expect((await c2.record(k2, { nowMs: T0 + 2, count: 1, windowSeconds: 10, sessions: [] })).windowCount).toBe(1);
  });

  it('remembers the sessions of the window, newest first and bounded', async () => {
    const c = counter();
    const k = key();
    await c.record(k, { nowMs: T0, count: 2, windowSeconds: 10, sessions: ['old-1', 'old-2'] });
    await c.record(k, { nowMs: T0 + 8_000, count: 1, windowSeconds: 10, sessions: ['new-1'] });
    const recent = await c.recentSessions(k, T0 + 9_000, 10);
    expect(recent[0]).toBe('new-1');
    expect([...recent].sort()).toEqual(['new-1', 'old-1', 'old-2']);
    expect(await c.recentSessions(k, T0 + 12_000, 10)).toEqual(['new-1']);
    const many = Array.from({ length: 150 }, (_, i) => `m-${String(i).padStart(3, '0')}`);
    await c.record(k, { nowMs: T0 + 13_000, count: 150, windowSeconds: 10, sessions: many });
    const s = await c.recentSessions(k, T0 + 13_000, 10);
    expect(s.length).toBe(MAX_TRACKED_SESSIONS);
  });

  it('keeps the counts of at most maxKeys keys, dropping the least recently used (memory and Redis alike)', async () => {
    const capPrefix = `${prefix}cap-`;
    const c = kind === 'memory' ? createMemoryRateCounter(20) : redisCounter(capPrefix, 20);
    open.push(c);
    const keys = Array.from({ length: 200 }, (_, i) => `org:many:tool-${i}`);
    await c.record(keys[0], { nowMs: T0, count: 5, windowSeconds: 10, sessions: ['s-0'] });
    for (const [i, k] of keys.slice(1).entries()) await c.record(k, { nowMs: T0 + 1 + i, count: 1, windowSeconds: 10, sessions: [] });
    // The newest keys kept their counts; the first was dropped (it counts from zero again).
    expect((await c.record(keys[199], { nowMs: T0 + 300, count: 1, windowSeconds: 10, sessions: [] })).windowCount).toBe(2);
    expect((await c.record(keys[0], { nowMs: T0 + 301, count: 1, windowSeconds: 10, sessions: [] })).windowCount).toBe(1);
    if (kind !== 'memory') {
      const stored = await storedKeys(`${capPrefix}anomaly*`);
      // At most three structures per kept key, plus the index.
      expect(stored.length).toBeLessThanOrEqual(20 * 3 + 1);
      expect(stored.length).toBeGreaterThan(20);
    }
  });

  it('opens the alert gate for exactly one of many concurrent callers, then again after the cooldown', async () => {
    const cs = [counter(), counter()];
    const k = key();
    const opened = await Promise.all(Array.from({ length: 20 }, (_, i) => cs[i % 2].tryOpenAlertGate(k, T0 + i, 60_000)));
    expect(opened.filter(Boolean)).toHaveLength(1);
    const first = T0 + opened.indexOf(true);
    expect(await cs[0].tryOpenAlertGate(k, first + 59_999, 60_000)).toBe(false);
    expect(await cs[1].tryOpenAlertGate(k, first + 60_000, 60_000)).toBe(true);
    expect(await cs[0].tryOpenAlertGate(k, first + 60_001, 60_000)).toBe(false);
    // A shorter cooldown applies to the next check.
    expect(await cs[0].tryOpenAlertGate(k, first + 61_000, 1_000)).toBe(true);
    // Another key has its own gate.
    expect(await cs[0].tryOpenAlertGate(key(), first + 61_000, 60_000)).toBe(true);
  });
});
