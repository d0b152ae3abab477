// Fault: the Redis server (a private redis-server) stopped for 5 s and started again while two instances ingest and stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js';
import { checkOrg, checkTrafficStored, delay, openResilient, statusOf, Traffic, until, type ResilientStream, type StreamExpectation } from './checker.js';
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
