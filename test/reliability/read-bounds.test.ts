// Reads bounded by bytes and by slots, against real server processes on Postgres and Redis: events of 4 MiB of
// compressible metadata (4 KB of gzip each to send) are listed and exported in pages of one, in bounded memory; and
// 600 streams of one organization resuming from Last-Event-ID 0 without reading leave another organization's reads
// answered, fast. Peak resident memory is read from /proc (VmHWM, reset before each measure). Each test prints its
// figures; the assertions are the bounds only a regression would cross.
import { writeFileSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, bearer, createOrg, http, toolCall, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { LogAudit } from './log-audit.js';
import { redisPrefix, spawnServer, type ServerProcess } from './processes.js';

const MiB = 1024 * 1024;

/** The process's resident memory now and its peak since the last reset, in MiB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)![1]);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

/** Starts a new peak: the kernel resets VmHWM to the current resident size. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

async function metric(url: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

function summary(ms: number[]): { p50: number; p99: number; max: number } {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => Math.round(s[Math.min(s.length - 1, Math.floor(s.length * q))] ?? 0);
  return { p50: at(0.5), p99: at(0.99), max: Math.round(s[s.length - 1] ?? 0) };
}

describe.runIf(realBackendAvailable)('reads bounded by bytes and by slots', () => {
  const audit = new LogAudit('read-bounds');
  let db: { url: string; drop(): Promise<void> };
  const servers: ServerProcess[] = [];
  const figures: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    console.log(figures.join('\n'));
    for (const s of servers) {
      s.kill('SIGKILL');
      await s.exited;
    }
    await db?.drop();
    audit.assertClean();
  });

  async function server(name: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<ServerProcess> {
    const s = await spawnServer({
      name,
      nodeFlags,
      env: { DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: redisPrefix(name.replace(/\W+/g, '-')), ANOMALY_MIN_RATE: '1000000000', ...env },
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

  it('lists and exports events of 4 MiB of compressible metadata in pages of one, in bounded memory', async () => {
    // A heap of 256 MiB: a server that held one page of these 40 events (160 MiB of JSON, several copies on the way
    // out) cannot answer it, and V8 collects before it grows, so the peaks below measure what a read holds.
    // The 4 MiB events must be stored whole (INGEST_MAX_EVENT_BYTES would cut them to 64 KiB): what is bounded here is the read.
    const s = await server('big events', { INGEST_MAX_EVENT_BYTES: String(8 * MiB) }, ['--max-old-space-size=256']);
    const o = await org(s);
    const blob = 'a'.repeat(4 * MiB - 200);
    const EVENTS = 40;
    let sent = 0;
    for (let i = 0; i < EVENTS; i++) {
      const body = gzipSync(JSON.stringify(toolCall(i, { sessionId: null, metadata: { i, blob } })));
      sent += body.length;
      const r = await fetch(`${s.url}/api/v1/ingest/events`, { method: 'POST', headers: { ...bearer(o.key), 'content-type': 'application/json', 'content-encoding': 'gzip' }, body });
      expect(r.status).toBe(200);
    }
    const pid = s.proc.pid!;

    // The listing: one event per page (each is over READ_PAGE_MAX_BYTES), following nextCursor to the end.
    resetPeak(pid);
    const before = memory(pid).rss;
    const listed: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: Response = await fetch(`${s.url}/api/v1/audit-events?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers: bearer(o.key) });
      expect(r.status).toBe(200);
      const page = (await r.json()) as { items: { seq: number; metadata: { i: number; blob: string } }[]; nextCursor: string | null };
      pages++;
      expect(page.items.length).toBeLessThanOrEqual(1);
      for (const e of page.items) {
        expect(e.metadata.blob).toHaveLength(blob.length);
        listed.push(e.metadata.i);
      }
      cursor = page.nextCursor;
    } while (cursor !== null);
    const listing = memory(pid);
    expect(listed).toEqual(Array.from({ length: EVENTS }, (_, i) => EVENTS - 1 - i));

    // Two exports at once, read to the end.
    resetPeak(pid);
    const exportsBefore = memory(pid).rss;
    const t0 = performance.now();
    const exported = await Promise.all(
      [0, 1].map(async () => {
        const r = await fetch(`${s.url}/api/v1/audit-events/export`, { headers: bearer(o.key) });
        expect(r.status).toBe(200);
        // Lines split on the bytes as they come (a 4 MiB line arrives in many chunks).
        let pending: Buffer[] = [];
        let lines = 0;
        const seen: number[] = [];
        for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
          let buf = Buffer.from(chunk);
          for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10)) {
            const line = Buffer.concat([...pending, buf.subarray(0, nl)]).toString('utf8');
            pending = [];
            seen.push((JSON.parse(line) as { metadata: { i: number } }).metadata.i);
            lines++;
            buf = buf.subarray(nl + 1);
          }
          if (buf.length) pending.push(buf);
        }
        return { lines, seen };
      }),
    );
    const exportMs = Math.round(performance.now() - t0);
    const exporting = memory(pid);
    for (const e of exported) expect(e.seen).toEqual(Array.from({ length: EVENTS }, (_, i) => i));
    figures.push(
      `${EVENTS} events of 4 MiB compressible metadata (${(sent / 1024).toFixed(0)} KB of gzip sent): GET /audit-events?limit=1000 in ${pages} pages, ` +
        `server RSS ${before.toFixed(0)} MiB, peak ${listing.peak.toFixed(0)} MiB (+${(listing.peak - before).toFixed(0)}); two concurrent exports of ` +
        `${(EVENTS * 4)} MiB each in ${exportMs} ms, RSS ${exportsBefore.toFixed(0)} MiB, peak ${exporting.peak.toFixed(0)} MiB (+${(exporting.peak - exportsBefore).toFixed(0)})`,
    );
    // One page held at a time (4 MiB of JSON, a few copies of it on its way out): the issue saw +930 MB for a listing of
    // 50 such events and a 3 GB peak for two exports.
    expect(listing.peak - before).toBeLessThan(150);
    expect(exporting.peak - exportsBefore).toBeLessThan(200);
  });

  it('600 streams of one organization resuming from Last-Event-ID 0 without reading leave another organization’s reads answered', async () => {
    const s = await server('replay storm', { SSE_HEARTBEAT_MS: '60000' });
    const [noisy, reader] = [await org(s), await org(s)];
    // A second key of the noisy organization: 600 streams are within its limits with two keys (500 per key).
    const key2 = await http(`${s.url}/api/v1/admin/organizations/${noisy.id}/api-keys`, { method: 'POST', headers: bearer(ADMIN_TOKEN), json: { name: 'second', scopes: ['events:read'] } });
    expect(key2.status).toBe(201);
    audit.secret('second API key', key2.body.key);
    // 30,000 tool calls in the noisy organization (straight in the table, as a busy one would have): every stream
    // replays a whole window of SSE_REPLAY_LIMIT (10,000).
    const sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    try {
      await sql.query(
        `INSERT INTO audit_events (org_id, seq, occurred_at, source, type, server_id, session_id, tool_name, action, latency_ms, metadata, dedupe_key)
         SELECT $1, g, now(), 'raw', 'tool_call', 'mcp-' || (g % 20), 'sess-' || (g % 300), 'tool_' || (g % 50), 'allow', g % 500, '{}'::jsonb, audit_dedupe_digest('storm-' || g)
         FROM generate_series(1, 30000) AS g`,
        [noisy.id],
      );
      await sql.query('UPDATE organizations SET event_seq = 30000 WHERE id = $1', [noisy.id]);
      await sql.query('ANALYZE audit_events');
    } finally {
      await sql.end();
    }
    expect((await http(`${s.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(reader.key), json: Array.from({ length: 200 }, (_, i) => toolCall(i, { sessionId: null })) })).status).toBe(200);
    const read = async () => {
      const t0 = performance.now();
      const status = await fetch(`${s.url}/api/v1/audit-events?limit=100`, { headers: bearer(reader.key) }).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status;
        },
        () => 0,
      );
      return { status, ms: performance.now() - t0 };
    };
    for (let i = 0; i < 10; i++) await read();
    const quiet: { status: number; ms: number }[] = [];
    for (let i = 0; i < 40; i++) quiet.push(await read());

    const pid = s.proc.pid!;
    resetPeak(pid);
    const before = memory(pid).rss;
    const replayed0 = await metric(s.url, 'audit_stream_sse_events_replayed_total');
    // The storm: 600 streams opened at once, each resuming from 0 and reading nothing but its status line.
    const port = Number(new URL(s.url).port);
    const statuses = new Map<string, number>();
    const sockets: Socket[] = [];
    const answered = Promise.all(
      Array.from({ length: 600 }, (_, i) =>
        new Promise<void>((resolve) => {
          const sock = connect(port, '127.0.0.1');
          sockets.push(sock);
          sock.on('error', () => resolve());
          sock.once('connect', () =>
            sock.write(`GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\nLast-Event-ID: 0\r\nAuthorization: Bearer ${i % 2 ? key2.body.key : noisy.key}\r\n\r\n`),
          );
          sock.once('data', (c: Buffer) => {
            const status = c.toString('latin1').slice(9, 12);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            sock.pause();
            resolve();
          });
        }),
      ),
    );
    let stormOver = false;
    const storm = answered.then(() => new Promise((r) => setTimeout(r, 10_000))).then(() => (stormOver = true));
    const during: { status: number; ms: number; at: number }[] = [];
    const t0 = performance.now();
    while (!stormOver || during.length < 20) during.push({ ...(await read()), at: performance.now() - t0 });
    await storm;
    const stormMs = Math.round(performance.now() - t0);
    const after = memory(pid);
    const replayed = (await metric(s.url, 'audit_stream_sse_events_replayed_total')) - replayed0;
    const waits = await metric(s.url, 'audit_stream_org_read_waits_total');
    const refused = await metric(s.url, 'audit_stream_sse_streams_rejected_total', '{limit="organization_reads"}');
    for (const sock of sockets) sock.destroy();
    const q = summary(quiet.map((r) => r.ms));
    const d = summary(during.map((r) => r.ms));
    const worst = during.reduce((w, r) => (r.ms > w.ms ? r : w));
    figures.push(
      `600 streams resuming from Last-Event-ID 0 (answers ${JSON.stringify(Object.fromEntries(statuses))}, ${replayed} events replayed, ` +
        `${waits} reads waited for a slot, ${refused} streams refused 429): another organization's GET /audit-events?limit=100 quiet p50 ${q.p50} ms, ` +
        `max ${q.max} ms; during ${stormMs} ms of storm ${during.length} reads, statuses ${[...new Set(during.map((r) => r.status))].join(',')}, ` +
        `p50 ${d.p50} ms, p99 ${d.p99} ms, worst ${d.max} ms (sent ${Math.round(worst.at - worst.ms)} ms into the storm); server RSS ${before.toFixed(0)} MiB, peak ${after.peak.toFixed(0)} MiB (+${(after.peak - before).toFixed(0)})`,
    );
    expect([...statuses.keys()].every((st) => st === '200' || st === '429')).toBe(true);
    expect(during.every((r) => r.status === 200)).toBe(true);
    // The organization's reads went through its slots: replay pages waited their turn (and, past the queue, streams
    // were told to come back later).
    expect(waits).toBeGreaterThan(0);
    // Target under 1 s (reported above); the bound is one only starved reads cross (the issue saw 6-9 s).
    expect(d.max).toBeLessThan(2500);
    // The issue saw 96 MB -> 1.7 GB.
    expect(after.peak - before).toBeLessThan(600);
  });
});
