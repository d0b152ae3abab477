// Load: 2,000 concurrent streams held for 60 s with events flowing, then closed: every client got every event in order,
// memory returns to its start, and no stream, subscription, socket, timer or listener is left behind.
import http, { type ClientRequest } from 'node:http';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { checkTrafficStored, delay, metric, storedEvents, Traffic, until } from './checker.js';
import { LogAudit } from './log-audit.js';
import { redisPrefix, spawnServer, type ServerProcess } from './processes.js';

const ORGS = 20;
const PER_ORG = 100; // 2,000 streams
const HOLD_MS = 60_000;

/** Progress notifications from every counting stream, so waits resolve on data rather than on a clock. */
const progress = new Set<() => void>();
const notify = () => {
  for (const w of [...progress]) w();
};
function waitFor(pred: () => boolean, timeoutMs: number, what: string): Promise<void> {
  if (pred()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!pred()) return;
      clearTimeout(timer);
      progress.delete(check);
      resolve();
    };
    const timer = setTimeout(() => {
      progress.delete(check);
      reject(new Error(`timed out waiting for ${what}`));
    }, timeoutMs);
    progress.add(check);
  });
}

/** A light SSE client for thousands of streams: one socket each, counts events and checks their ids only increase. */
class CountingStream {
  status = 0;
  count = 0;
  last = 0;
  disorder = 0;
  closedBy: 'us' | 'server' | null = null;
  private req: ClientRequest | null = null;
  private buf = '';

  constructor(readonly org: TestOrg, readonly startAfter: number) {}

  open(base: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const req = http.get(`${base}/api/v1/events`, { agent: false, headers: { accept: 'text/event-stream', authorization: `Bearer ${this.org.key}`, 'last-event-id': String(this.startAfter) } }, (res) => {
        this.status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => this.onData(chunk));
        res.on('close', () => {
          this.closedBy ??= 'server';
          notify();
        });
        resolve();
      });
      req.on('error', (err) => (this.status ? undefined : reject(err)));
      this.req = req;
    });
  }

  private onData(chunk: string) {
    this.buf += chunk;
    let idx;
    while ((idx = this.buf.indexOf('\n\n')) >= 0) {
      const frame = this.buf.slice(0, idx);
      this.buf = this.buf.slice(idx + 2);
      const m = /^id: (\d+)$/m.exec(frame);
      if (!m) continue;
      const seq = Number(m[1]);
      if (seq <= this.last) this.disorder++;
      this.last = seq;
      this.count++;
    }
    notify();
  }

  close() {
    this.closedBy ??= 'us';
    this.req?.destroy();
  }
}

/** Opens streams in waves (the listen backlog is finite), all before returning. */
async function openAll(streams: CountingStream[], base: string) {
  for (let i = 0; i < streams.length; i += 100) await Promise.all(streams.slice(i, i + 100).map((s) => s.open(base)));
}

async function scrape(base: string): Promise<string> {
  return (await fetch(`${base}/metrics`)).text();
}

/** Subscriber counts of the orgs' channels, as Redis sees them. */
async function numsub(redis: Redis, prefix: string, orgs: TestOrg[]): Promise<number[]> {
  const r = (await redis.pubsub('NUMSUB', ...orgs.map((o) => `${prefix}org:${o.id}`))) as (string | number)[];
  return orgs.map((_, i) => Number(r[i * 2 + 1]));
}

/** Per org: the streamed events after `after`, from Postgres. */
async function streamedAfter(dbUrl: string, org: TestOrg, after: number): Promise<number> {
  return (await storedEvents(dbUrl, org.id)).rows.filter((r) => r.payload !== null && r.seq > after).length;
}

describe.runIf(realBackendAvailable)('2,000 streams under load', () => {
  const audit = new LogAudit('load-streams');
  let db: { url: string; drop(): Promise<void> };
  let redis: Redis;

  beforeAll(async () => {
    db = await createTestDatabase();
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });
  afterAll(async () => {
    redis?.disconnect();
    await db?.drop();
    audit.assertClean();
  });

  async function makeOrgs(base: string): Promise<TestOrg[]> {
    const orgs: TestOrg[] = [];
    for (let i = 0; i < ORGS; i++) orgs.push(await createOrg(base, { scopes: ['events:read', 'ingest:write'] }));
    orgs.forEach((o) => audit.org(o));
    return orgs;
  }

  /** Streams for every org, each resuming after the org's current seq (so what it must receive is known exactly). */
  async function streamsFor(orgs: TestOrg[], perOrg: number): Promise<CountingStream[]> {
    const out: CountingStream[] = [];
    for (const org of orgs) {
      const { counter } = await storedEvents(db.url, org.id);
      for (let i = 0; i < perOrg; i++) out.push(new CountingStream(org, counter));
    }
    return out;
  }

  /** Every stream got exactly the org's streamed events after its start, in order, and is still open. */
  async function expectComplete(streams: CountingStream[], orgs: TestOrg[]) {
    for (const org of orgs) {
      const mine = streams.filter((s) => s.org === org);
      const expected = await streamedAfter(db.url, org, mine[0].startAfter);
      expect(expected).toBeGreaterThan(0);
      await waitFor(() => mine.every((s) => s.count >= expected), 60_000, `${org.name}: ${expected} events on ${mine.length} streams`);
      for (const s of mine) {
        expect(s.count).toBe(expected);
        expect(s.disorder).toBe(0);
        expect(s.closedBy).toBeNull();
      }
    }
  }

  it('a separate server process: memory after closing returns to within 10% of its start (heap after full GC)', async () => {
    const prefix = redisPrefix('load');
    const server: ServerProcess = await spawnServer({
      name: 'load server',
      env: { DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: prefix, SSE_HEARTBEAT_MS: '5000', ANOMALY_MIN_RATE: '1000000000' },
      nodeFlags: ['--expose-gc'],
      preload: ['test/reliability/gc-hook.ts'],
    });
    audit.output('load server', server.output);
    let gcRuns = 0;
    const heapAfterGc = async () => {
      gcRuns++;
      server.kill('SIGUSR2');
      const m = await server.waitForOutput(new RegExp(`"msg":"gc done","n":${gcRuns},"heapUsed":(\\d+),"heapTotal":\\d+,"rss":(\\d+)`));
      const metrics = metric(await scrape(server.url), 'nodejs_heap_size_used_bytes');
      return { heap: Number(m[1]), rss: Number(m[2]), metricsHeap: metrics ?? 0 };
    };
    try {
      const orgs = await makeOrgs(server.url);
      // Warm-up: the same paths, briefly, so code compiled and pools filled once are in the baseline.
      const warm = await streamsFor(orgs, 10);
      await openAll(warm, server.url);
      const warmTraffic = new Traffic({ orgs, urls: () => [server.url], batchSize: 2, pauseMs: 200 }).start();
      await delay(8000);
      await warmTraffic.stop();
      await expectComplete(warm, orgs);
      warm.forEach((s) => s.close());
      await until('warm-up streams closed', async () => metric(await scrape(server.url), 'audit_stream_sse_streams_open') === 0);
      const before = await heapAfterGc();

      const streams = await streamsFor(orgs, PER_ORG);
      const t0 = Date.now();
      await openAll(streams, server.url);
      console.log(`opened ${streams.length} streams in ${Date.now() - t0} ms`);
      expect(streams.filter((s) => s.status !== 200)).toEqual([]);
      const open = await scrape(server.url);
      expect(metric(open, 'audit_stream_sse_streams_open')).toBe(ORGS * PER_ORG);
      expect(metric(open, 'audit_stream_sse_organizations')).toBe(ORGS);
      expect(await numsub(redis, prefix, orgs)).toEqual(orgs.map(() => 1));

      // Held for 60 s with events flowing: every org posts 2 tool calls a second, each delivered to its 100 streams.
      const traffic = new Traffic({ orgs, urls: () => [server.url], batchSize: 2, pauseMs: 1000 }).start();
      await delay(HOLD_MS);
      await traffic.stop();
      await expectComplete(streams, orgs);
      await checkTrafficStored(db.url, traffic);
      const peak = await heapAfterGc();
      const delivered = streams.reduce((n, s) => n + s.count, 0);

      streams.forEach((s) => s.close());
      await until('every stream closed on the server', async () => {
        const m = await scrape(server.url);
        return metric(m, 'audit_stream_sse_streams_open') === 0 && metric(m, 'audit_stream_sse_organizations') === 0;
      });
      await until('no org channel subscribed', async () => (await numsub(redis, prefix, orgs)).every((n) => n === 0));
      const after = await heapAfterGc();
      const mb = (x: number) => `${(x / 1048576).toFixed(1)} MiB`;
      console.log(
        `load: ${traffic.requests.length} requests, ${delivered} events delivered to ${streams.length} streams over ${HOLD_MS / 1000} s\n` +
          `  heap after full GC: start ${mb(before.heap)}, with 2,000 streams ${mb(peak.heap)}, after close ${mb(after.heap)} (${(((after.heap - before.heap) / before.heap) * 100).toFixed(1)}%)\n` +
          `  /metrics nodejs_heap_size_used_bytes: start ${mb(before.metricsHeap)}, after ${mb(after.metricsHeap)}\n` +
          `  rss (not expected to shrink back: the allocator keeps freed pages): start ${mb(before.rss)}, peak ${mb(peak.rss)}, after ${mb(after.rss)}`,
      );
      expect(peak.heap).toBeGreaterThan(before.heap);
      expect(after.heap).toBeLessThan(before.heap * 1.1);
      expect(server.output()).not.toMatch(/MaxListenersExceededWarning|uncaught|unhandled/i);
    } finally {
      server.kill('SIGTERM');
      await server.exited;
    }
  });

  it('in process: after 2,000 streams close, no socket, timer, listener, feed or subscription is left', async () => {
    const prefix = redisPrefix('load-inproc');
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const app: RunningApp = await startApp({ DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: prefix, MIGRATE_ON_START: 'false', SSE_HEARTBEAT_MS: '2000', ANOMALY_MIN_RATE: '1000000000', LOG_LEVEL: 'warn' });
    audit.app('in-process app', app);
    const resources = () => {
      const counts: Record<string, number> = {};
      for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
      return counts;
    };
    const listeners = () => ({ server: app.ctx.app.server.listenerCount('connection') + app.ctx.app.server.listenerCount('request'), process: process.listenerCount('warning') + process.listenerCount('exit') });
    try {
      const orgs = await makeOrgs(app.url);
      // Warm-up, and fill the database pool so its connections are in the baseline.
      const warm = await streamsFor(orgs, 5);
      await openAll(warm, app.url);
      const warmTraffic = new Traffic({ orgs, urls: () => [app.url], batchSize: 2, pauseMs: 200 }).start();
      await Promise.all(Array.from({ length: 12 }, () => app.ctx.db.query('SELECT pg_sleep(0.05)')));
      await delay(3000);
      await warmTraffic.stop();
      await expectComplete(warm, orgs);
      warm.forEach((s) => s.close());
      await until('warm-up closed', async () => app.ctx.hub.stats().connections === 0);
      // Idle keep-alive sockets of the warm-up's requests close on their own timers: wait for the count to settle.
      let baseline = resources();
      await until('resources settle', async () => {
        const now = resources();
        const same = JSON.stringify(now) === JSON.stringify(baseline);
        baseline = now;
        return same;
      });
      const baseListeners = listeners();

      const streams = await streamsFor(orgs, PER_ORG);
      await openAll(streams, app.url);
      expect(app.ctx.hub.stats()).toEqual({ connections: ORGS * PER_ORG, feeds: ORGS });
      const during = resources();
      expect(during.TCPSocketWrap ?? 0).toBeGreaterThanOrEqual((baseline.TCPSocketWrap ?? 0) + 2 * ORGS * PER_ORG);
      const traffic = new Traffic({ orgs, urls: () => [app.url], batchSize: 2, pauseMs: 1000 }).start();
      await delay(15_000);
      await traffic.stop();
      await expectComplete(streams, orgs);

      streams.forEach((s) => s.close());
      await until('hub empty', async () => JSON.stringify(app.ctx.hub.stats()) === JSON.stringify({ connections: 0, feeds: 0 }));
      const m = await scrape(app.url);
      expect(metric(m, 'audit_stream_sse_streams_open')).toBe(0);
      expect(metric(m, 'audit_stream_sse_organizations')).toBe(0);
      expect(await numsub(redis, prefix, orgs)).toEqual(orgs.map(() => 0));
      // Sockets and timers: back to the baseline (the traffic's idle keep-alive sockets are given time to close).
      let last: Record<string, number> = {};
      await until(
        'sockets and timers back to the baseline',
        async () => {
          last = resources();
          return (last.TCPSocketWrap ?? 0) <= (baseline.TCPSocketWrap ?? 0) + 2 && (last.Timeout ?? 0) <= (baseline.Timeout ?? 0) + 2;
        },
        30_000,
      ).catch((err: Error) => {
        throw new Error(`${err.message}: baseline ${JSON.stringify(baseline)}, now ${JSON.stringify(last)}`);
      });
      console.log(`in process: resources before ${JSON.stringify(baseline)}, with 2,000 streams ${JSON.stringify(during)}, after ${JSON.stringify(last)}`);
      expect(listeners()).toEqual(baseListeners);
      expect(warnings.filter((w) => /MaxListeners|leak/i.test(w))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await app.close();
    }
  });
});
