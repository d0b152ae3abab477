// Noisy clients and tenants against a real server process on Postgres and Redis: what paused filtered streams cost in
// memory, what a login flood does to another organization's ingest, and what one organization's write burst does to
// another's reads. Each test prints its figures; assertions are counts and bounds only a regression would cross.
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, http, toolCall, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { metric, until } from './checker.js';
import { LogAudit } from './log-audit.js';
import { redisPrefix, spawnServer, type ServerProcess } from './processes.js';

const MB = 1024 * 1024;
const mb = (x: number) => `${(x / MB).toFixed(1)} MB`;

/** Timed requests: every status and latency. */
async function timed(fn: () => Promise<{ status: number }>): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const r = await fn().catch(() => ({ status: 0 }));
  return { status: r.status, ms: performance.now() - t0 };
}

function summary(xs: { ms: number }[]): { p50: number; max: number } {
  const ms = xs.map((x) => x.ms).sort((a, b) => a - b);
  return { p50: Math.round(ms[Math.floor(ms.length / 2)] ?? 0), max: Math.round(ms[ms.length - 1] ?? 0) };
}

describe.runIf(realBackendAvailable)('noisy clients and tenants', () => {
  const audit = new LogAudit('noisy-neighbours');
  let db: { url: string; drop(): Promise<void> };
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const s of servers) {
      s.kill('SIGTERM');
      await s.exited;
    }
    await db?.drop();
    audit.assertClean();
  });

  async function server(name: string, env: Record<string, string>, gc = false): Promise<ServerProcess> {
    const s = await spawnServer({
      name,
      env: { DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: redisPrefix(name.replace(/\W+/g, '-')), ANOMALY_MIN_RATE: '1000000000', ...env },
      ...(gc ? { nodeFlags: ['--expose-gc'], preload: ['test/reliability/gc-hook.ts'] } : {}),
    });
    servers.push(s);
    audit.output(name, s.output);
    return s;
  }

  async function org(s: ServerProcess): Promise<TestOrg> {
    const o = await createOrg(s.url);
    audit.org(o);
    return o;
  }

  it('50 paused filtered streams and one 5,000-event batch: the frames are shared, peak memory grows by a few MB', async () => {
    const s = await server('filtered streams', { SSE_HEARTBEAT_MS: '60000' }, true);
    let gcRuns = 0;
    const memory = async () => {
      gcRuns++;
      s.kill('SIGUSR2');
      const m = await s.waitForOutput(new RegExp(`"msg":"gc done","n":${gcRuns},.*"rss":(\\d+),.*"maxRss":(\\d+)`));
      return { rss: Number(m[1]), maxRss: Number(m[2]) };
    };
    const o = await org(s);
    const long = 'x'.repeat(150);
    const batch = (n: number) => Array.from({ length: n }, (_, i) => toolCall(i, { serverId: 'srv-1', toolName: `tool-${long}-${i % 10}`, sessionId: null }));
    // Warm-up: the same code paths once, so what is compiled and allocated once is in the baseline.
    expect((await http(`${s.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(o.key), json: batch(5000) })).status).toBe(200);
    const before = await memory();

    // 50 streams, half filtered by type and half by server (every event matches both), that never read a byte.
    const port = Number(new URL(s.url).port);
    const sockets: Socket[] = [];
    for (let i = 0; i < 50; i++) {
      const query = i % 2 ? 'types=tool_call' : 'serverId=srv-1';
      const sock = connect(port, '127.0.0.1');
      sock.on('error', () => undefined);
      await new Promise<void>((r) => sock.once('connect', () => r()));
      sock.write(`GET /api/v1/events?${query} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${o.key}\r\n\r\n`);
      sock.pause();
      sockets.push(sock);
    }
    await until('50 streams open', async () => metric(await (await fetch(`${s.url}/metrics`)).text(), 'audit_stream_sse_streams_open') === 50);
    const delivered0 = metric(await (await fetch(`${s.url}/metrics`)).text(), 'audit_stream_sse_events_delivered_total') ?? 0;
    expect((await http(`${s.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(o.key), json: batch(5000) })).body.accepted).toBe(5000);
    await until('the batch handed to all 50 streams', async () => (metric(await (await fetch(`${s.url}/metrics`)).text(), 'audit_stream_sse_events_delivered_total') ?? 0) - delivered0 >= 50 * 5000, 60_000);
    const after = await memory();
    const growth = after.maxRss - before.maxRss;
    console.log(
      `50 paused filtered streams + one 5,000-event batch (${mb(5000 * 330)} of frames): peak RSS ${mb(before.maxRss)} -> ${mb(after.maxRss)} (+${mb(growth)}); ` +
        `RSS after GC ${mb(before.rss)} -> ${mb(after.rss)}`,
    );
    for (const sock of sockets) sock.destroy();
    // Each of the 50 connections building its own copy costs ~50 × 2 copies of the batch (the issue measured ~376 MB).
    expect(growth).toBeLessThan(40 * MB);
  });

  it('a login flood from many addresses with fresh emails does not drag another organization’s ingest', async () => {
    const s = await server('login flood', { TRUST_PROXY: 'true' });
    const o = await org(s);
    const ingestOnce = () => timed(() => http(`${s.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(o.key), json: [toolCall(1, { sessionId: null })] }));
    const ingestRun = async (n: number) => {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await ingestOnce());
      return out;
    };
    await ingestRun(10);
    const quiet = await ingestRun(40);

    // 40 sign-in attempts a second (twice what one hashing slot clears), each from its own address with a fresh email,
    // for as long as the measured ingest runs.
    let flooding = true;
    const logins: number[] = [];
    const inFlight = new Set<Promise<void>>();
    const flood = (async () => {
      for (let i = 0; flooding && i < 4000; i++) {
        const p = http(`${s.url}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'x-forwarded-for': `10.0.${i >> 8}.${i & 255}` },
          json: { email: `nobody-${randomBytes(4).toString('hex')}@example.test`, password: 'guess' },
        })
          .catch(() => ({ status: 0 }))
          .then((r) => void logins.push(r.status));
        inFlight.add(p);
        void p.finally(() => inFlight.delete(p));
        await new Promise((r) => setTimeout(r, 25));
      }
      await Promise.all(inFlight);
    })();
    // Measured for 6 s of flood (at most 2,000 requests).
    const loud: { status: number; ms: number }[] = [];
    for (const t0 = performance.now(); performance.now() - t0 < 6000 && loud.length < 2000; ) loud.push(await ingestOnce());
    flooding = false;
    await flood;
    const q = summary(quiet);
    const l = summary(loud);
    const count = (st: number) => logins.filter((x) => x === st).length;
    console.log(
      `another organization's ingest: quiet p50 ${q.p50} ms, max ${q.max} ms; during a flood of ${logins.length} sign-ins ` +
        `(${count(401)} × 401, ${count(503)} × 503 busy, ${count(429)} × 429): p50 ${l.p50} ms, max ${l.max} ms`,
    );
    expect([...quiet, ...loud].every((r) => r.status === 200)).toBe(true);
    expect(count(503)).toBeGreaterThan(0);
    expect(logins.every((st) => st === 401 || st === 503)).toBe(true);
    // Bounds only a starved ingest would cross (the issue saw ~1 s per request at 24 sign-ins/s).
    expect(l.p50).toBeLessThan(Math.max(250, q.p50 * 10));
    expect(l.max).toBeLessThan(3000);
  });

  it('24 concurrent 10,000-event ingests of one organization leave another organization’s reads answered, fast', async () => {
    const s = await server('write burst', {});
    const [noisy, reader] = [await org(s), await org(s)];
    expect((await http(`${s.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(reader.key), json: Array.from({ length: 100 }, (_, i) => toolCall(i, { sessionId: null })) })).status).toBe(200);
    const read = () => timed(() => http(`${s.url}/api/v1/audit-events?limit=50`, { headers: bearer(reader.key) }));
    const quiet: { status: number; ms: number }[] = [];
    for (let i = 0; i < 20; i++) quiet.push(await read());

    const t0 = performance.now();
    let done = false;
    const burst = Promise.all(
      Array.from({ length: 24 }, (_, r) =>
        http(`${s.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(noisy.key), json: Array.from({ length: 10_000 }, (_, i) => toolCall(r * 10_000 + i, { sessionId: null })) }),
      ),
    ).finally(() => (done = true));
    const during: { status: number; ms: number }[] = [];
    while (!done) during.push(await read());
    const results = await burst;
    const burstMs = Math.round(performance.now() - t0);
    const q = summary(quiet);
    const d = summary(during);
    console.log(
      `24 × 10,000-event ingests of one organization took ${burstMs} ms (${results.filter((r) => r.status === 200).length} × 200); ` +
        `another organization's GET /api/v1/audit-events: quiet p50 ${q.p50} ms, max ${q.max} ms; during the burst ${during.length} reads, ` +
        `statuses ${[...new Set(during.map((r) => r.status))].join(',')}, p50 ${d.p50} ms, worst ${d.max} ms`,
    );
    expect(results.map((r) => r.status)).toEqual(Array(24).fill(200));
    expect(results.reduce((n, r) => n + r.body.accepted, 0)).toBe(240_000);
    expect(during.length).toBeGreaterThan(5);
    expect(during.every((r) => r.status === 200)).toBe(true);
    // Target under 1 s (reported above); the bound is one only starvation would cross (the issue saw 6.7 s and 503s).
    expect(d.max).toBeLessThan(4000);
  });
});
