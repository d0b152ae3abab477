// Export of a large range (1,000,000 events written by SQL) from a separate server process on real Postgres: every event
// once, in seq order, plain and gzip, while the server's resident memory stays flat, also behind a client that stops
// reading for a while. RSS is read from /proc.
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { readFileSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { LogAudit } from './log-audit.js';
import { reap, redisPrefix, spawnServer, type ServerProcess } from './processes.js';

const EVENTS = 1_000_000;

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

function get(url: string, headers: Record<string, string>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, agent: false }, resolve);
    req.on('error', reject);
    req.end();
  });
}

describe.runIf(realBackendAvailable)('export of 1,000,000 events in constant memory', () => {
  const audit = new LogAudit('export-memory');
  let db: { url: string; drop(): Promise<void> };
  let server: ServerProcess;
  let org: TestOrg;
  const figures: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    // A heap of 128 MiB, less than half the range's 318 MiB of text: a server that held the range could not finish the
    // export, and V8 collects before it grows its heap, so the RSS figures below measure the export, not how far the
    // heap happened to grow before a collection (+3 to +104 MiB seen with the default limit on this machine).
    server = await spawnServer({
      name: 'export',
      nodeFlags: ['--max-old-space-size=128'],
      env: { DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: redisPrefix('export') },
    });
    audit.output('server', server.output);
    org = await createOrg(server.url);
    audit.org(org);
    const sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    try {
      // Tool calls over the last 30 days, seq order = time order, with the fields and metadata of real ones.
      await sql.query(
        `INSERT INTO audit_events (org_id, seq, occurred_at, source, type, server_id, session_id, tool_name, action, latency_ms, payload, metadata, dedupe_key)
         SELECT $1, g, now() - interval '30 days' + g * interval '2 seconds', 'cloudwatch', 'tool_call', 'mcp-' || (g % 50), 'sess-' || (g / 250),
                'tool_' || (g % 200), CASE WHEN g % 300 = 0 THEN 'deny' ELSE 'allow' END, g % 800,
                NULL,
                jsonb_build_object('source_detail', '/aws/lambda/mcp-gateway', 'traceId', md5(g::text)), audit_dedupe_digest('cw:' || g)
         FROM generate_series(1, $2::int) AS g`,
        [org.id, EVENTS],
      );
      await sql.query('UPDATE organizations SET event_seq = $2 WHERE id = $1', [org.id, EVENTS]);
      await sql.query('ANALYZE audit_events');
    } finally {
      await sql.end();
    }
  });
  afterAll(async () => {
    console.log(figures.join('\n'));
    await reap(server);
    await db?.drop();
    audit.assertClean();
  });

  /** Reads the whole export line by line, checking seq order; samples the server's RSS along the way. */
  async function readAll(what: string, gzip: boolean, pauseAtLine?: number) {
    const pid = server.proc.pid!;
    const before = rssMiB(pid);
    const res = await get(`${server.url}/api/v1/audit-events/export`, { authorization: `Bearer ${org.key}`, ...(gzip ? { 'accept-encoding': 'gzip' } : {}) });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe(gzip ? 'gzip' : undefined);
    const text = gzip ? res.pipe(createGunzip()) : res;
    let expected = 1;
    let bad = 0;
    // Flat means: once the first pages are through (connections open, code compiled, heap at its working size), the
    // next 900,000 events add nothing that stays.
    let settled = 0;
    let peak = 0;
    let pausedPeak = 0;
    let bytes = 0;
    res.on('data', (c: Buffer) => (bytes += c.length));
    for await (const line of createInterface({ input: text, crlfDelay: Infinity })) {
      const seq = (JSON.parse(line) as { seq: number }).seq;
      if (seq !== expected) bad++;
      expected = seq + 1;
      if (seq === 100_000) settled = rssMiB(pid);
      if (seq % 20_000 === 0 && seq > 100_000) peak = Math.max(peak, rssMiB(pid));
      if (seq === pauseAtLine) {
        // A client that stops reading: the server must stop reading pages too, not buffer the rest of the range.
        res.pause();
        for (let i = 0; i < 30; i++) {
          await new Promise((r) => setTimeout(r, 100));
          pausedPeak = Math.max(pausedPeak, rssMiB(pid));
        }
        res.resume();
      }
    }
    const after = rssMiB(pid);
    const top = Math.max(peak, pausedPeak);
    figures.push(
      `${what}: ${expected - 1} events, ${(bytes / 1048576).toFixed(0)} MiB on the wire; server RSS ${before.toFixed(0)} MiB before, ` +
        `${settled.toFixed(0)} MiB after 100,000 events, peak over the next 900,000 ${top.toFixed(0)} MiB (+${(top - settled).toFixed(1)})` +
        `${pauseAtLine ? `, while the client paused ${pausedPeak.toFixed(0)} MiB` : ''}, ${after.toFixed(0)} MiB after`,
    );
    return { count: expected - 1, bad, growth: top - settled, total: top - before };
  }

  it('streams every event once in seq order with flat memory, and holds still behind a paused client', async () => {
    const r = await readAll('plain NDJSON', false, EVENTS / 2);
    expect(r.bad).toBe(0);
    expect(r.count).toBe(EVENTS);
    // Pages of EXPORT_PAGE_ROWS (1,000 rows, ~0.4 MiB of text) and 64 KiB buffers: a server that held the range
    // (318 MiB of text) or a growing part of it would pass these bounds. They leave room for V8's heap, which grows and
    // shrinks with garbage collection on a busy machine (the RSS falls back after the export).
    expect(r.growth).toBeLessThan(100);
    expect(r.total).toBeLessThan(200);
  });

  it('does the same gzipped', async () => {
    const r = await readAll('gzip NDJSON', true);
    expect(r.bad).toBe(0);
    expect(r.count).toBe(EVENTS);
    expect(r.growth).toBeLessThan(100);
  });
});
