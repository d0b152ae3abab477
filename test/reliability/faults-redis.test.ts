// Faults: the Redis server (a private redis-server) stopped for 5 s and started again, or silent for 5 s (a network
// partition through a proxy of the suite's own), while two instances ingest and stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js';
import { checkOrg, checkTrafficStored, delay, openResilient, statusOf, storedEvents, Traffic, until, type ResilientStream, type StreamExpectation } from './checker.js';
import { startFaultProxy, type FaultProxy } from './fault-proxy.js';
import { LogAudit } from './log-audit.js';
import { redisPrefix } from './processes.js';

describe.runIf(realBackendAvailable)('Redis stopped for 5 s mid-stream', () => {
  const audit = new LogAudit('faults-redis');
  let redis: PrivateRedis;
  let db: { url: string; drop(): Promise<void> };
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_PREFIX: redisPrefix('redis'), SSE_HEARTBEAT_MS: '500' };
    a = await startApp(env);
    b = await startApp(env);
    audit.app('instance A', a);
    audit.app('instance B', b);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
    await db?.drop();
    audit.assertClean();
  });

  it('ingest keeps succeeding on both instances; every stream gets every event once, in order, after recovery', async () => {
    const orgs: TestOrg[] = [];
    for (let i = 0; i < 3; i++) orgs.push(await createOrg(a.url));
    orgs.forEach((o) => audit.org(o));

    const streams: { org: TestOrg; exp: StreamExpectation }[] = [];
    const open = async (org: TestOrg, name: string, urls: string[], startAfter: number | null, types: string[] | null = null) => {
      const stream = await openResilient({ urls: () => urls, path: `/api/v1/events${types ? `?types=${types.join(',')}` : ''}`, headers: bearer(org.key), startAfter, name });
      streams.push({ org, exp: { stream, types } });
      return stream;
    };
    for (const [k, org] of orgs.entries()) {
      await open(org, `org${k} on A, no Last-Event-ID`, [a.url], null);
      await open(org, `org${k} on B, Last-Event-ID 0`, [b.url], 0);
      await open(org, `org${k} on B, tool_call only`, [b.url], 0, ['tool_call']);
    }

    // Requests alternate between A and B; a Redis outage must not fail any of them.
    const traffic = new Traffic({ orgs, urls: () => [a.url, b.url], batchSize: 5, pauseMs: 30 }).start();
    await traffic.waitForMoreSuccesses(30, 30_000);

    await redis.stop();
    const down = Date.now();
    // A client joining during the outage replays from the database and then goes live.
    const late: ResilientStream[] = [];
    for (const [k, org] of orgs.entries()) late.push(await open(org, `org${k} joined on A during the outage`, [a.url], 0));
    // The fault lasts 5 s, with traffic flowing through all of it.
    await Promise.all([delay(5000), traffic.waitForMoreSuccesses(60, 30_000)]);
    const acceptedWhileDown = traffic.requests.filter((r) => r.accepted !== null && r.attempts[0].ms > down).length;
    expect(await statusOf(`${a.url}/readyz`)).toBe(503);

    await redis.start();
    const up = Date.now();
    // Both instances see Redis again (no event for that from outside: poll readiness).
    await until('A ready', async () => (await statusOf(`${a.url}/readyz`)) === 200);
    await until('B ready', async () => (await statusOf(`${b.url}/readyz`)) === 200);
    await traffic.waitForMoreSuccesses(30, 30_000);
    await traffic.stop();

    const attempts = traffic.attempts();
    expect(attempts.filter((x) => x.status !== 200), 'every ingest attempt succeeded, outage or not').toEqual([]);
    expect(acceptedWhileDown).toBeGreaterThanOrEqual(60);
    await checkTrafficStored(db.url, traffic);
    let stored = 0;
    for (const org of orgs) stored += (await checkOrg(db.url, org.id, streams.filter((s) => s.org === org).map((s) => s.exp))).stored;
    for (const { exp } of streams) {
      // Nobody was cut: the gap was filled on the same connection.
      expect(exp.stream.connections.length, exp.stream.opts.name).toBe(1);
      expect(exp.stream.current()!.end).toBeNull();
    }
    console.log(`redis fault: ${traffic.requests.length} requests, ${stored} events stored, ${acceptedWhileDown} requests accepted while Redis was down, recovered in ${Date.now() - up} ms`);
    for (const { exp } of streams) await exp.stream.stop();
  });
});

describe.runIf(realBackendAvailable)('Redis silent for 5 s (network partition) mid-stream', () => {
  const audit = new LogAudit('faults-redis-partition');
  let redis: PrivateRedis;
  let proxy: FaultProxy;
  let db: { url: string; drop(): Promise<void> };
  let a: RunningApp;
  let b: RunningApp;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    proxy = await startFaultProxy('127.0.0.1', redis.port);
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REDIS_PREFIX: redisPrefix('redis-silent'), SSE_HEARTBEAT_MS: '500' };
    a = await startApp(env);
    b = await startApp(env);
    audit.app('instance A', a);
    audit.app('instance B', b);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await proxy?.close();
    await redis?.stop();
    await db?.drop();
    audit.assertClean();
  });

  it('ingest keeps succeeding (each request waits at most the publish timeout); streams catch up from Postgres; nothing lost after it heals', async () => {
    const orgs: TestOrg[] = [];
    for (let i = 0; i < 2; i++) orgs.push(await createOrg(a.url));
    orgs.forEach((o) => audit.org(o));
    const streams: { org: TestOrg; exp: StreamExpectation }[] = [];
    for (const [k, org] of orgs.entries()) {
      for (const [name, url] of [
        ['on A', a.url],
        ['on B', b.url],
      ] as const) {
        const stream = await openResilient({ urls: () => [url], headers: bearer(org.key), startAfter: 0, name: `org${k} ${name}` });
        streams.push({ org, exp: { stream } });
      }
    }
    const traffic = new Traffic({ orgs, urls: () => [a.url, b.url], batchSize: 5, pauseMs: 30 }).start();
    await traffic.waitForMoreSuccesses(20, 30_000);

    proxy.set('blackhole');
    const down = Date.now();
    const silence = delay(5000);
    await delay(1500);
    // While Redis is silent, every client still gets what was committed (on any instance), from the periodic catch-up.
    for (const org of orgs) {
      const rows = (await storedEvents(db.url, org.id)).rows.filter((r) => r.payload !== null);
      const target = rows[rows.length - 1].seq;
      for (const { exp } of streams.filter((x) => x.org === org)) await exp.stream.waitFor(() => (exp.stream.lastSeq() ?? 0) >= target, 15_000, `seq ${target} while Redis is silent`);
    }
    await silence;
    proxy.set('up');
    const up = Date.now();
    await until('A ready', async () => (await statusOf(`${a.url}/readyz`)) === 200);
    await until('B ready', async () => (await statusOf(`${b.url}/readyz`)) === 200);
    await traffic.waitForMoreSuccesses(20, 30_000);
    await traffic.stop();

    const attempts = traffic.attempts();
    expect(attempts.filter((x) => x.status !== 200), 'every ingest attempt succeeded').toEqual([]);
    const during = attempts.filter((x) => x.ms >= down && x.ms <= up + 1000);
    expect(during.length).toBeGreaterThan(0);
    const slowest = Math.max(...during.map((x) => x.tookMs));
    // The publish has a 1 s command timeout and is awaited; Postgres already holds the events.
    expect(slowest).toBeLessThan(3000);
    await checkTrafficStored(db.url, traffic);
    for (const org of orgs) await checkOrg(db.url, org.id, streams.filter((s) => s.org === org).map((s) => s.exp));
    for (const { exp } of streams) expect(exp.stream.connections.length, exp.stream.opts.name).toBe(1);
    console.log(`redis silent: ${traffic.requests.length} requests, ${during.length} while silent (slowest ${slowest} ms)`);
    for (const { exp } of streams) await exp.stream.stop();
  });
});
