// Two instances sharing Postgres and Redis: cross-instance delivery, org isolation, and Redis faults mid-stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { bearer, createOrg, postEvents, startApp, toolCall, type RunningApp } from '../helpers/app.js';
import { openSse, seqs, type SseClient } from '../helpers/sse.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js';
import { randomBytes } from 'node:crypto';

/** Every seq from `from` to `to` exactly once, in order. */
function expectExactly(c: SseClient, from: number, to: number) {
  const s = seqs(c);
  expect(s.length).toBe(to - from + 1);
  s.forEach((v, i) => expect(v).toBe(from + i));
}

describe.runIf(realBackendAvailable)('stream across two instances (Postgres + Redis)', () => {
  let redis: PrivateRedis;
  let db: { url: string; drop(): Promise<void> };
  let a: RunningApp;
  let b: RunningApp;
  const prefix = `as-multi-${randomBytes(4).toString('hex')}:`;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_PREFIX: prefix, ANOMALY_MIN_RATE: '1000000000' };
    a = await startApp(env);
    b = await startApp(env);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
    await db?.drop();
  });

  it('delivers events posted to A to clients on A and B, in seq order, once each', async () => {
    const org = await createOrg(a.url);
    const onA = await openSse(`${a.url}/api/v1/events?types=tool_call`, bearer(org.key));
    const onB = await openSse(`${b.url}/api/v1/events?types=tool_call`, bearer(org.key));
    for (let i = 0; i < 20; i++) {
      const batch = Array.from({ length: 25 }, (_, j) => toolCall(i * 25 + j));
      expect((await postEvents(i % 2 ? b.url : a.url, org.key, batch)).status).toBe(200);
    }
    await onA.waitForCount(500);
    await onB.waitForCount(500);
    expectExactly(onA, 1, 500);
    expectExactly(onB, 1, 500);
    onA.close();
    onB.close();
  });

  it('keeps organizations apart while several post at once', async () => {
    const orgs = await Promise.all([createOrg(a.url), createOrg(a.url), createOrg(b.url)]);
    const clients = await Promise.all(orgs.flatMap((o) => [openSse(`${a.url}/api/v1/events`, bearer(o.key)), openSse(`${b.url}/api/v1/events`, bearer(o.key))]));
    await Promise.all(
      orgs.map(async (o, k) => {
        for (let i = 0; i < 10; i++) {
          await postEvents(i % 2 ? a.url : b.url, o.key, Array.from({ length: 10 }, (_, j) => toolCall(i * 10 + j, { serverId: `org-${k}` })));
        }
      }),
    );
    await Promise.all(clients.map((c) => c.waitForCount(100)));
    clients.forEach((c, idx) => {
      const k = Math.floor(idx / 2);
      expect(c.events.every((e) => e.json.serverId === `org-${k}`)).toBe(true);
      expectExactly(c, 1, 100);
    });
    clients.forEach((c) => c.close());
  });

  it('loses nothing when the Redis subscriber connection is killed while events flow', async () => {
    const org = await createOrg(a.url);
    const onA = await openSse(`${a.url}/api/v1/events`, bearer(org.key));
    const onB = await openSse(`${b.url}/api/v1/events`, bearer(org.key));
    let total = 0;
    for (let i = 0; i < 30; i++) {
      if (i === 10 || i === 20) {
        await redis.waitForClients(`${prefix}sub`, 2);
        expect(await redis.killClients(`${prefix}sub`)).toBe(2);
      }
      const r = await postEvents(a.url, org.key, Array.from({ length: 10 }, (_, j) => toolCall(i * 10 + j)));
      expect(r.status).toBe(200);
      total += r.body.accepted;
    }
    await onA.waitForCount(total);
    await onB.waitForCount(total);
    expectExactly(onA, 1, total);
    expectExactly(onB, 1, total);
    onA.close();
    onB.close();
  });

  it('loses nothing when Redis restarts while events keep flowing; ingest keeps succeeding', async () => {
    const org = await createOrg(a.url);
    const onA = await openSse(`${a.url}/api/v1/events`, bearer(org.key));
    const onB = await openSse(`${b.url}/api/v1/events`, bearer(org.key));
    let total = 0;
    for (let i = 0; i < 30; i++) {
      if (i === 10) await redis.stop();
      if (i === 20) await redis.start();
      const r = await postEvents(i % 2 ? a.url : b.url, org.key, Array.from({ length: 10 }, (_, j) => toolCall(i * 10 + j)));
      expect(r.status).toBe(200);
      total += r.body.accepted;
    }
    expect(total).toBe(300);
    await onA.waitForCount(total, 30_000);
    await onB.waitForCount(total, 30_000);
    expectExactly(onA, 1, total);
    expectExactly(onB, 1, total);
    onA.close();
    onB.close();
  });
});
