// Fault: Postgres unreachable for 5 s (a TCP proxy of the suite's own is cut, or black-holed) while two instances ingest and stream.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, http, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import {
  checkOrg,
  checkTrafficStored,
  delay,
  expectNoPartialRequests,
  expectOnly503WithRetryAfter,
  openResilient,
  statusOf,
  storedIds,
  Traffic,
  until,
  type StreamExpectation,
} from './checker.js';
import { startFaultProxy, type FaultProxy, type ProxyMode } from './fault-proxy.js';
import { LogAudit } from './log-audit.js';
import { redisPrefix, spawnServer, type ServerProcess } from './processes.js';

const HEARTBEAT_MS = 300;

describe.runIf(realBackendAvailable)('Postgres unavailable for 5 s', () => {
  const audit = new LogAudit('faults-postgres');
  let db: { url: string; drop(): Promise<void> };
  let proxy: FaultProxy;
  let a: RunningApp;
  /** B is a real process: a crash shows as an exit, as it would in production. */
  let b: ServerProcess;

  beforeAll(async () => {
    db = await createTestDatabase();
    const target = new URL(db.url);
    proxy = await startFaultProxy(target.hostname, Number(target.port || 5432));
    const env = { DATABASE_URL: proxy.via(db.url), REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: redisPrefix('pg'), SSE_HEARTBEAT_MS: String(HEARTBEAT_MS) };
    a = await startApp(env);
    b = await spawnServer({ name: 'instance B', env });
    audit.app('instance A', a);
    audit.output('instance B (process)', b.output);
  });

  afterAll(async () => {
    await a?.close();
    b?.kill('SIGTERM');
    await b?.exited;
    await proxy?.close();
    await db?.drop();
    audit.assertClean();
  });

  /** A request whose events must not be stored while the database is away; checked directly on Postgres, then retried. */
  async function probeWhileDown(org: TestOrg) {
    const ids = Array.from({ length: 4 }, (_, i) => `probe-${randomBytes(4).toString('hex')}-${i}`);
    const body = ids.map((id) => ({ id, serverId: 'srv-probe', toolName: 'probe', sessionId: 'sess-probe' }));
    const t0 = Date.now();
    const r = await http(`${a.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(org.key), json: body });
    return { ids, body, r, ms: Date.now() - t0 };
  }

  const QUERY_TIMEOUT_MS = 10_000; // src/db/pg-db.ts
  const CONNECT_TIMEOUT_MS = 5000;
  const scenarios: { mode: ProxyMode; outageMs: number; title: string }[] = [
    { mode: 'refuse', outageMs: 5000, title: 'connections reset and refused for 5 s' },
    { mode: 'blackhole', outageMs: 5000, title: 'black hole for 5 s (connections silent, new ones never answered)' },
    { mode: 'blackhole', outageMs: QUERY_TIMEOUT_MS + 2000, title: 'black hole longer than the query timeout' },
  ];

  /** Large requests whose transactions are open on Postgres (seen in pg_stat_activity) when the fault starts. */
  async function bigRequestsInFlight(org: TestOrg) {
    const reqs = Array.from({ length: 3 }, (_, k) => {
      const ids = Array.from({ length: 4000 }, (_, i) => `big-${randomBytes(3).toString('hex')}-${k}-${i}`);
      const body = ids.map((id, i) => ({ id, serverId: 'srv-big', toolName: `big-${i % 5}`, sessionId: `big-${i % 50}` }));
      return { ids, body, answer: http(`${(k % 2 ? a : b).url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(org.key), json: body }) };
    });
    const dbName = new URL(db.url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      // No event tells when another process's transaction is open: poll the server's own view of it.
      await until('an ingest transaction open on Postgres', async () => {
        const r = await admin.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND xact_start IS NOT NULL AND query ILIKE '%audit_events%'",
          [dbName],
        );
        return r.rows[0].n > 0;
      }, 30_000);
    } finally {
      await admin.end();
    }
    return reqs;
  }

  for (const { mode, outageMs, title } of scenarios) {
    it(`${title}: ingest answers 503 + Retry-After and stores nothing partial; streams stay open; all recovers without a restart`, async () => {
      const orgs: TestOrg[] = [];
      for (let i = 0; i < 3; i++) orgs.push(await createOrg(a.url));
      orgs.forEach((o) => audit.org(o));
      const streams: { org: TestOrg; exp: StreamExpectation }[] = [];
      for (const [k, org] of orgs.entries()) {
        for (const [name, urls, startAfter] of [
          ['on A', [a.url], null],
          ['on B', [b.url], 0],
        ] as const) {
          const stream = await openResilient({ urls: () => [...urls], headers: bearer(org.key), startAfter, name: `${mode} org${k} ${name}` });
          streams.push({ org, exp: { stream } });
        }
      }
      const traffic = new Traffic({
        orgs,
        urls: () => [a.url, b.url],
        batchSize: 5,
        pauseMs: 30,
        retryMs: 200,
        storedCount: async (orgId, ids) => (await storedIds(db.url, orgId, ids)).size,
      }).start();
      await traffic.waitForMoreSuccesses(30, 30_000);

      const big = await bigRequestsInFlight(orgs[2]);
      proxy.set(mode);
      const down = Date.now();
      // While the database is away: a request answers 503 with Retry-After and leaves nothing behind.
      const probing = probeWhileDown(orgs[0]);
      const readyWhileDown = statusOf(`${a.url}/readyz`);
      // One client loses its connection during the outage: its reconnects are refused (503) until Postgres is back.
      const cutClient = streams[1].exp.stream;
      cutClient.cut();
      // The outage lasts outageMs whatever happens; requests cut by a reset answer at once, silent ones at a timeout.
      await delay(outageMs);
      const restoredAt = Date.now();
      proxy.set('up');
      const probe = await probing;
      expect(probe.r.status, JSON.stringify(probe.r.body)).toBe(503);
      expect(probe.r.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(probe.r.body).toMatchObject({ statusCode: 503, code: 'storage_unavailable' });
      expect((await storedIds(db.url, orgs[0].id, probe.ids)).size).toBe(0);
      expect(await readyWhileDown).toBe(503);

      // The transactions the fault interrupted were rolled back whole (or, had they committed, are there whole).
      for (const r of big) {
        const answer = await r.answer;
        expect([200, 503], JSON.stringify(answer.body)).toContain(answer.status);
        const stored = (await storedIds(db.url, orgs[2].id, r.ids)).size;
        expect([0, r.ids.length]).toContain(stored);
        if (answer.status === 200) expect(stored).toBe(r.ids.length);
      }

      // Streams stayed open through it, heartbeating.
      for (const { exp } of streams.filter((x) => x.exp.stream !== cutClient)) {
        expect(exp.stream.connections.length, exp.stream.opts.name).toBe(1);
        expect(exp.stream.current()!.end, exp.stream.opts.name).toBeNull();
        expect(exp.stream.commentsBetween(down, restoredAt), `${exp.stream.opts.name}: heartbeats while down`).toBeGreaterThanOrEqual(Math.floor((outageMs - 1000) / (2 * HEARTBEAT_MS)));
      }

      // Without a restart: requests land again, and the refused probe, retried, lands once.
      await traffic.waitForMoreSuccesses(30, 30_000);
      await until('A ready', async () => (await statusOf(`${a.url}/readyz`)) === 200);
      const retried = await http(`${b.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(orgs[0].key), json: probe.body });
      expect(retried.body).toEqual({ accepted: 4, duplicates: 0 });
      const again = await http(`${a.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(orgs[0].key), json: probe.body });
      expect(again.body).toEqual({ accepted: 0, duplicates: 4 });
      for (const r of big) {
        const retry = await http(`${b.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(orgs[2].key), json: r.body });
        expect(retry.status).toBe(200);
        expect(retry.body.accepted + retry.body.duplicates).toBe(r.ids.length);
        expect((await storedIds(db.url, orgs[2].id, r.ids)).size).toBe(r.ids.length);
      }
      // Both instances are the same as before: alive, and never restarted.
      expect(b.isRunning(), `instance B exited:\n${b.output().slice(-2000)}`).toBe(true);
      for (const app of [a, b]) expect(await statusOf(`${app.url}/healthz`)).toBe(200);
      // A stream opened after recovery replays everything.
      const fresh = await openResilient({ urls: () => [a.url], headers: bearer(orgs[1].key), startAfter: 0, name: `${mode} org1 opened after recovery` });
      streams.push({ org: orgs[1], exp: { stream: fresh } });
      await traffic.stop();

      const attempts = traffic.attempts();
      expectOnly503WithRetryAfter(attempts);
      // The cut client was refused with 503 (never another error) while the database was away, then resumed by id.
      const refusals = cutClient.connections.slice(1).filter((c) => c.status !== 200);
      expect(refusals.every((c) => c.status === 503), JSON.stringify(refusals.map((c) => c.status))).toBe(true);
      expect(cutClient.current()!.status).toBe(200);
      expect(cutClient.current()!.lastEventId).not.toBeNull();
      const failed = attempts.filter((x) => x.status !== 200);
      expect(failed.filter((x) => x.ms >= down).length, 'requests refused during the outage').toBeGreaterThanOrEqual(3);
      const partial = expectNoPartialRequests(traffic);
      await checkTrafficStored(db.url, traffic);
      for (const org of orgs) await checkOrg(db.url, org.id, streams.filter((s) => s.org === org).map((s) => s.exp));
      const slowest = Math.max(...failed.map((x) => x.tookMs));
      console.log(
        `postgres ${mode} ${outageMs} ms: ${traffic.requests.length} requests, ${failed.length} answered 503 (slowest ${slowest} ms, probe ${probe.ms} ms), ` +
          `${partial.committedThoughFailed} of them had committed before the connection was lost`,
      );
      // Nobody waits on a dead database longer than the outage, the query timeout or the connect timeout allow.
      expect(slowest).toBeLessThan(Math.max(Math.min(outageMs, QUERY_TIMEOUT_MS), CONNECT_TIMEOUT_MS) + 2000);
      for (const { exp } of streams) await exp.stream.stop();
    });
  }
});
