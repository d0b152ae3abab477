// A burst that cuts many slow streams of one organization, on a real server process (Postgres, Redis): the cut clients
// resume with Last-Event-ID as EventSource does and get every event once, in order; with the recent window they are
// served from memory (no replay from Postgres), and what the storm costs in memory and in another organization's read
// latency is printed beside the same storm with the window off (every resume read from Postgres, as before).
import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, toolCall, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { metric, until } from './checker.js';
import { LogAudit } from './log-audit.js';
import { redisPrefix, spawnServer, type ServerProcess } from './processes.js';

const STREAMS = 100;
const SLOW = 50; // of them stop reading during the burst
const BATCHES = 40;
const BATCH = 500; // 20,000 events of about 370 bytes: 7.4 MB of frames
const RETRY_MS = 500;
const MB = 1024 * 1024;
const mb = (x: number) => `${(x / MB).toFixed(1)} MB`;

/** Progress of every stream, so waits resolve on data, not on a clock. */
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

/**
 * A light EventSource: one socket at a time; when the server ends the stream it reconnects after the retry delay with
 * Last-Event-ID = its last complete event. Counts events and checks each id follows the one before.
 */
class ResumingStream {
  count = 0;
  last = 0;
  misordered = 0;
  cuts = 0;
  private res: IncomingMessage | null = null;
  private req: ClientRequest | null = null;
  private buf = '';
  private stopped = false;
  private paused = false;

  constructor(
    private readonly base: string,
    private readonly org: TestOrg,
  ) {}

  open(): Promise<void> {
    return new Promise((resolve) => {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...bearer(this.org.key) };
      if (this.last > 0) headers['last-event-id'] = String(this.last);
      this.buf = '';
      const req = http.get(`${this.base}/api/v1/events`, { agent: false, headers }, (res) => {
        this.res = res;
        if (this.paused) res.pause();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => this.onData(chunk));
        res.on('close', () => this.ended());
        resolve();
      });
      req.on('error', () => {
        this.ended();
        resolve();
      });
      this.req = req;
    });
  }

  pause(): void {
    this.paused = true;
    this.res?.pause();
  }

  resume(): void {
    this.paused = false;
    this.res?.resume();
  }

  stop(): void {
    this.stopped = true;
    this.req?.destroy();
  }

  private ended(): void {
    if (this.stopped || !this.req) return;
    this.req = null;
    this.res = null;
    this.cuts++;
    setTimeout(() => void this.open(), RETRY_MS);
  }

  private onData(chunk: string): void {
    this.buf += chunk;
    let idx;
    while ((idx = this.buf.indexOf('\n\n')) >= 0) {
      const frame = this.buf.slice(0, idx);
      this.buf = this.buf.slice(idx + 2);
      if (!frame.startsWith('id: ')) continue;
      const seq = Number(frame.slice(4, frame.indexOf('\n')));
      if (this.last && seq !== this.last + 1) this.misordered++;
      this.last = seq;
      this.count++;
    }
    notify();
  }
}

interface StormFigures {
  seconds: number;
  cuts: number;
  resumesFromMemory: number;
  resumesFromDatabase: number;
  replayedFromDatabase: number;
  peakRssGrowth: number;
  readP50: number;
  readMax: number;
  readStatuses: number[];
  complete: number;
  inOrder: number;
}

describe.runIf(realBackendAvailable)('a resume storm after a burst', () => {
  const audit = new LogAudit('resume-storm');
  let db: { url: string; drop(): Promise<void> };
  const servers: ServerProcess[] = [];
  const figures: Record<string, StormFigures> = {};

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

  async function storm(name: string, env: Record<string, string>): Promise<StormFigures> {
    const s = await spawnServer({
      name,
      env: {
        DATABASE_URL: db.url,
        REDIS_URL: process.env.TEST_REDIS_URL!,
        REDIS_PREFIX: redisPrefix(name.replace(/\W+/g, '-')),
        ANOMALY_MIN_RATE: '1000000000',
        SSE_RETRY_MS: String(RETRY_MS),
        SSE_BUFFER_LIMIT_BYTES: String(64 * 1024),
        SSE_REPLAY_LIMIT: '100000',
        ...env,
      },
      nodeFlags: ['--expose-gc'],
      preload: ['test/reliability/gc-hook.ts'],
    });
    servers.push(s);
    audit.output(name, s.output);
    const scrape = async () => (await fetch(`${s.url}/metrics`)).text();
    const series = (text: string, name: string, from: string) => Number(new RegExp(`^${name}\\{from="${from}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    let gcRuns = 0;
    const maxRss = async () => {
      gcRuns++;
      s.kill('SIGUSR2');
      return Number((await s.waitForOutput(new RegExp(`"msg":"gc done","n":${gcRuns},.*"maxRss":(\\d+)`)))[1]);
    };
    const [o, reader] = [await createOrg(s.url), await createOrg(s.url)];
    audit.org(o);
    audit.org(reader);
    const post = (key: string, events: unknown[]) =>
      fetch(`${s.url}/api/v1/ingest/events`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify(events) });
    const batch = (b: number) => Array.from({ length: BATCH }, (_, i) => toolCall(b * BATCH + i, { toolName: `tool-${'x'.repeat(150)}-${i % 10}`, sessionId: null }));
    // Warm-up: the paths run once (and the reader's events), so what is compiled and allocated once is in the baseline.
    expect((await post(o.key, batch(0))).status).toBe(200);
    expect((await post(reader.key, Array.from({ length: 100 }, (_, i) => toolCall(i, { sessionId: null })))).status).toBe(200);
    const first = Number(metric(await scrape(), 'audit_stream_bus_events_published_total') ?? 0);
    expect(first).toBeGreaterThan(0);

    const streams = Array.from({ length: STREAMS }, () => new ResumingStream(s.url, o));
    for (let i = 0; i < streams.length; i += 50) await Promise.all(streams.slice(i, i + 50).map((c) => c.open()));
    await until(`${STREAMS} streams open`, async () => metric(await scrape(), 'audit_stream_sse_streams_open') === STREAMS);
    const slow = streams.slice(0, SLOW);
    for (const c of slow) c.pause();
    const before = await scrape();
    const rssBefore = await maxRss();

    // Another organization reads its events the whole time.
    let reading = true;
    const reads: { status: number; ms: number }[] = [];
    const readLoop = (async () => {
      while (reading) {
        const t0 = performance.now();
        const r = await fetch(`${s.url}/api/v1/audit-events?limit=100`, { headers: bearer(reader.key) }).catch(() => null);
        await r?.text();
        reads.push({ status: r?.status ?? 0, ms: performance.now() - t0 });
      }
    })();

    const t0 = performance.now();
    for (let b = 1; b <= BATCHES; b++) expect((await post(o.key, batch(b))).status).toBe(200);
    const text = await scrape();
    const published = Number(metric(text, 'audit_stream_bus_events_published_total') ?? 0) - first;
    expect(published).toBe(BATCHES * BATCH);
    // The slow streams are cut (their backlog passed the buffer limit), then read again and resume.
    await until('the slow streams cut', async () => (metric(await scrape(), 'audit_stream_sse_slow_client_disconnects_total') ?? 0) >= SLOW, 60_000);
    for (const c of slow) c.resume();
    await waitFor(() => streams.every((c) => c.count >= BATCHES * BATCH), 170_000, `every stream to have ${BATCHES * BATCH} events`);
    const seconds = (performance.now() - t0) / 1000;
    reading = false;
    await readLoop;
    const after = await scrape();
    const rssAfter = await maxRss();
    for (const c of streams) c.stop();

    const ms = reads.map((r) => r.ms).sort((a, b) => a - b);
    const f: StormFigures = {
      seconds,
      cuts: streams.reduce((n, c) => n + c.cuts, 0),
      resumesFromMemory: series(after, 'audit_stream_sse_resumes_total', 'memory') - series(before, 'audit_stream_sse_resumes_total', 'memory'),
      resumesFromDatabase: series(after, 'audit_stream_sse_resumes_total', 'database') - series(before, 'audit_stream_sse_resumes_total', 'database'),
      replayedFromDatabase:
        series(after, 'audit_stream_sse_events_replayed_total', 'database') - series(before, 'audit_stream_sse_events_replayed_total', 'database'),
      peakRssGrowth: rssAfter - rssBefore,
      readP50: Math.round(ms[Math.floor(ms.length / 2)] ?? 0),
      readMax: Math.round(ms[ms.length - 1] ?? 0),
      readStatuses: [...new Set(reads.map((r) => r.status))],
      complete: streams.filter((c) => c.count === BATCHES * BATCH).length,
      inOrder: streams.filter((c) => c.misordered === 0).length,
    };
    console.log(
      `${name}: ${STREAMS} streams (${SLOW} paused during the burst), ${BATCHES * BATCH} events: all delivered in ${f.seconds.toFixed(1)} s; ` +
        `${f.cuts} cuts; resumes from memory ${f.resumesFromMemory}, from the database ${f.resumesFromDatabase} (${f.replayedFromDatabase} events read back); ` +
        `peak RSS +${mb(f.peakRssGrowth)}; another organization's ${reads.length} reads: p50 ${f.readP50} ms, worst ${f.readMax} ms, statuses ${f.readStatuses.join(',')}; ` +
        `${f.complete} streams complete, ${f.inOrder} in order`,
    );
    return f;
  }

  it('with the recent window: every cut stream resumes from memory, every event once and in order', async () => {
    const f = (figures.window = await storm('window on', { SSE_RECENT_WINDOW_BYTES: String(16 * MB) }));
    expect(f.complete).toBe(STREAMS);
    expect(f.inOrder).toBe(STREAMS);
    expect(f.cuts).toBeGreaterThanOrEqual(SLOW);
    expect(f.resumesFromMemory).toBeGreaterThanOrEqual(SLOW);
    expect(f.resumesFromDatabase).toBe(0);
    expect(f.replayedFromDatabase).toBe(0);
    expect(f.readStatuses).toEqual([200]);
    // Target under 1 s (printed above); the bound is one only a storm of database replays would cross.
    expect(f.readMax).toBeLessThan(4000);
  });

  it('without it (as before): the same storm is read back from Postgres, still exact', async () => {
    const f = (figures.database = await storm('window off', { SSE_RECENT_WINDOW_BYTES: '0' }));
    expect(f.complete).toBe(STREAMS);
    expect(f.inOrder).toBe(STREAMS);
    expect(f.resumesFromDatabase).toBeGreaterThanOrEqual(SLOW);
    expect(f.replayedFromDatabase).toBeGreaterThan(0);
    if (figures.window) console.log(`peak RSS growth with / without the window: +${mb(figures.window.peakRssGrowth)} / +${mb(f.peakRssGrowth)}`);
  });
});
