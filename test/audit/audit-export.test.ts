// GET /api/v1/audit-events/export on both backends: NDJSON of a range in seq order, every event once, gzip when asked,
// resumable, bounded pages, bad ranges refused, other organizations invisible, and it stops when the client goes.
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

interface Item { seq: number; occurredAt: string; toolName: string | null; metadata: Record<string, unknown> }

const TIMES = ['2024-03-01T10:00:00.000Z', '2019-06-01T00:00:00.000Z', '2024-03-01T11:00:00.000Z', '2024-03-01T10:59:59.999Z', '2031-01-01T00:00:00.000Z', '2024-03-02T00:00:00.000Z'];

/** The raw answer (no automatic decompression, unlike fetch). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const lines = (text: string): Item[] => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Item);

describe.each(backendNames)('audit export (%s)', (backendName) => {
  // Pages of 3 events: every range below spans several pages.
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', EXPORT_PAGE_ROWS: '3' });
  let org: TestOrg;
  let other: TestOrg;
  let all: Item[];

  beforeAll(async () => {
    org = await createOrg(app.url);
    other = await createOrg(app.url);
    for (let i = 0; i < 4; i++) {
      const r = await postEvents(app.url, org.key, TIMES.map((t, j) => toolCall(i * 10 + j, { timestamp: t, toolName: `t${i}-${j}` })));
      expect(r.status).toBe(200);
    }
    await postEvents(app.url, other.key, TIMES.map((t, j) => toolCall(100 + j, { timestamp: t, toolName: 'other-org' })));
    all = (await http(`${app.url}/api/v1/audit-events?limit=1000&order=asc`, { headers: bearer(org.key) })).body.items;
    expect(all).toHaveLength(24);
  });

  const exportUrl = (q: string) => `${app.url}/api/v1/audit-events/export${q}`;

  it('streams every event of the range once, in seq order, as NDJSON with the listing fields', async () => {
    const ranges: [string | undefined, string | undefined][] = [
      [undefined, undefined],
      ['2024-03-01T10:00:00.000Z', '2024-03-01T11:00:00.000Z'],
      ['2019-01-01T00:00:00.000Z', '2024-03-01T11:00:00.001Z'],
      ['2024-03-01T11:00:00.000Z', undefined],
      [undefined, '2024-01-01T00:00:00.000Z'],
      ['2025-01-01T00:00:00.000Z', '2030-01-01T00:00:00.000Z'],
    ];
    for (const [from, to] of ranges) {
      const q = [from && `from=${from}`, to && `to=${to}`].filter(Boolean).join('&');
      const res = await fetch(exportUrl(q ? `?${q}` : ''), { headers: bearer(org.key) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
      const got = lines(await res.text());
      const expected = all.filter((e) => (!from || e.occurredAt >= from) && (!to || e.occurredAt < to));
      expect({ q, got }).toEqual({ q, got: expected });
    }
  });

  it('gzips when the client accepts gzip, and not when it refuses it', async () => {
    const zipped = await rawGet(exportUrl(''), { ...bearer(org.key), 'accept-encoding': 'br;q=1, gzip;q=0.8' });
    expect(zipped.status).toBe(200);
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.headers.vary).toMatch(/accept-encoding/i);
    expect(lines(gunzipSync(zipped.body).toString('utf8'))).toEqual(all);
    const plain = await rawGet(exportUrl(''), { ...bearer(org.key), 'accept-encoding': 'gzip;q=0, identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(lines(plain.body.toString('utf8'))).toEqual(all);
  });

  it('resumes after the last delivered seq with cursor', async () => {
    const res = await fetch(exportUrl(`?cursor=${all[10].seq}&from=2019-01-01T00:00:00.000Z`), { headers: bearer(org.key) });
    expect(lines(await res.text())).toEqual(all.slice(11));
  });

  it('refuses bad ranges with 400 and issue paths', async () => {
    for (const [q, paths] of [
      ['?from=yesterday', ['from']],
      ['?to=2024-13-45T00:00:00Z', ['to']],
      ['?from=2024-03-02T00:00:00Z&to=2024-03-01T00:00:00Z', ['to']],
      ['?from=2024-03-01T00:00:00Z&to=2024-03-01T00:00:00Z', ['to']],
      ['?cursor=-1', ['cursor']],
    ] as const) {
      const r = await http(exportUrl(q), { headers: bearer(org.key) });
      expect({ q, status: r.status }).toEqual({ q, status: 400 });
      expect(r.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(r.body.issues.map((i: { path: string }) => i.path)).toEqual(paths);
    }
  });

  it("shows an organization only its own events, and needs events:read", async () => {
    const mine = lines(await (await fetch(exportUrl(''), { headers: bearer(other.key) })).text());
    expect(mine.map((e) => e.toolName)).toEqual(Array(6).fill('other-org'));
    expect(mine.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await http(exportUrl(''))).status).toBe(401);
    const writer = await createOrg(app.url, { scopes: ['ingest:write'] });
    const r = await http(exportUrl(''), { headers: bearer(writer.key) });
    expect(r.status).toBe(403);
  });

  /** An organization with 30,000 events straight in the table (the hour map's trigger sees them like any insert): far
   * more than the socket buffers hold, so an export of it is still running while its client does not read. */
  async function bigOrg(): Promise<TestOrg> {
    const big = await createOrg(app.url);
    await app.ctx.db.query(
      `INSERT INTO audit_events (org_id, seq, occurred_at, source, type, server_id, tool_name, action, payload, metadata, dedupe_key)
       SELECT $1, g, now(), 'raw', 'tool_call', 'srv', 'tool', 'allow', NULL, jsonb_build_object('pad', repeat('x', 200)), audit_dedupe_digest('bulk-' || g)
       FROM generate_series(1, 30000) AS g`,
      [big.id],
    );
    await app.ctx.db.query('UPDATE organizations SET event_seq = 30000 WHERE id = $1', [big.id]);
    return big;
  }

  it('stops reading pages when the client disconnects', async () => {
    const big = await bigOrg();
    // Its own connection (no agent): read the first chunk, then hang up.
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(exportUrl(''), { headers: bearer(big.key), agent: false }, (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      req.end();
    });
    const ended = await new Promise<{ rows: number; complete: boolean }>((resolve) => {
      const find = () => {
        const line = app.logs.flatMap((l) => l.split('\n')).find((l) => l.includes('"export ended"') && l.includes(big.id));
        if (line) resolve(JSON.parse(line));
        else setImmediate(find);
      };
      find();
    });
    expect(ended.complete).toBe(false);
    expect(ended.rows).toBeLessThan(30000);
  });

  it('runs at most EXPORT_MAX_PER_ORG exports of one organization at once: 429 beyond, other organizations unaffected', async () => {
    const big = await bigOrg();
    // Exports whose clients read nothing after the headers: each stays in progress until its client hangs up.
    const held = await Promise.all(
      Array.from({ length: 4 }, () =>
        new Promise<{ status: number; hangUp: () => void }>((resolve, reject) => {
          const req = httpRequest(exportUrl(''), { headers: bearer(big.key), agent: false }, (res) => {
            res.pause();
            resolve({ status: res.statusCode ?? 0, hangUp: () => req.destroy() });
          });
          req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
          req.end();
        }),
      ),
    );
    expect(held.map((h) => h.status)).toEqual([200, 200, 200, 200]);
    const refused = await http(exportUrl(''), { headers: bearer(big.key) });
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('too_many_requests');
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await http(exportUrl(''), { headers: bearer(other.key) })).status).toBe(200);
    // Once a client has gone, its place is free again (the server notices the hang-up when its socket closes).
    held[0].hangUp();
    await new Promise<void>((resolve) => {
      const ended = () => app.logs.flatMap((l) => l.split('\n')).some((l) => l.includes('"export ended"') && l.includes(big.id));
      const look = () => (ended() ? resolve() : setImmediate(look));
      look();
    });
    expect((await rawGet(exportUrl('?cursor=29999'), bearer(big.key))).status).toBe(200);
    for (const h of held.slice(1)) h.hangUp();
  });
});

describe.each(backendNames)('an export whose client stops reading (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', EXPORT_IDLE_TIMEOUT_MS: '300', EXPORT_MAX_PER_ORG: '1' });

  it('is ended after EXPORT_IDLE_TIMEOUT_MS without progress, which frees its place', async () => {
    const big = await createOrg(app.url);
    // Far more than the socket buffers hold: the export is still running when its client stops reading.
    await app.ctx.db.query(
      `INSERT INTO audit_events (org_id, seq, occurred_at, source, type, server_id, tool_name, action, metadata, dedupe_key)
       SELECT $1, g, now(), 'raw', 'tool_call', 'srv', 'tool', 'allow', jsonb_build_object('pad', repeat('x', 200)), audit_dedupe_digest('bulk-' || g)
       FROM generate_series(1, 30000) AS g`,
      [big.id],
    );
    await app.ctx.db.query('UPDATE organizations SET event_seq = 30000 WHERE id = $1', [big.id]);
    const url = `${app.url}/api/v1/audit-events/export`;
    // A client that reads the first chunk, then nothing (its socket is paused: it would not even notice a close).
    const stuck = await new Promise<{ status: number; hangUp: () => void }>((resolve, reject) => {
      const req = httpRequest(url, { headers: bearer(big.key), agent: false }, (res) => {
        res.once('data', () => {
          res.pause();
          resolve({ status: res.statusCode ?? 0, hangUp: () => req.destroy() });
        });
      });
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      req.end();
    });
    expect(stuck.status).toBe(200);
    // EXPORT_MAX_PER_ORG is 1 here: refused while the stuck export holds the place, served once the server ended it.
    let next = await http(`${url}?cursor=29990`, { headers: bearer(big.key) });
    expect(next.status).toBe(429);
    for (let i = 0; i < 2000 && next.status === 429; i++) next = await http(`${url}?cursor=29990`, { headers: bearer(big.key) });
    stuck.hangUp();
    expect(next.status).toBe(200);
    expect(app.logs.join('')).toContain('EXPORT_IDLE_TIMEOUT_MS');
    expect(String(next.body).trim().split('\n')).toHaveLength(10);
  });
});

describe('EXPORT_PAGE_ROWS and EXPORT_MAX_PER_ORG', () => {
  it('are bounded', () => {
    expect(loadConfig({}).EXPORT_MAX_PER_ORG).toBe(4);
    expect(loadConfig({}).EXPORT_IDLE_TIMEOUT_MS).toBe(60000);
    expect(() => loadConfig({ EXPORT_IDLE_TIMEOUT_MS: '99' })).toThrow(ConfigError);
    expect(() => loadConfig({ EXPORT_MAX_PER_ORG: '0' })).toThrow(ConfigError);
    expect(loadConfig({ EXPORT_PAGE_ROWS: '10000' }).EXPORT_PAGE_ROWS).toBe(10000);
    expect(() => loadConfig({ EXPORT_PAGE_ROWS: '10001' })).toThrow(ConfigError);
    expect(() => loadConfig({ EXPORT_PAGE_ROWS: '0' })).toThrow(ConfigError);
  });
});
