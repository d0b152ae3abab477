// Pages bounded by bytes on both backends (READ_PAGE_MAX_BYTES): a listing or export page over events too large for the
// budget holds fewer of them and continues exactly after its last one (none skipped or repeated, both orders), an event
// larger than the budget is a page by itself, and stream replays read pages cut the same way.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';

const BUDGET = 64 * 1024;
const KiB = 1024;

interface Item { seq: number; metadata: { i: number; blob?: string } }

/** The metric's value (0 when it is not exposed). */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/**
 * The events' metadata, in the order they are sent, five times over: small ones; incompressible ones of 20 KiB (three
 * fit in a page, sized from their headers); a compressible one of 100 KiB after two of those (it does not fit after
 * them, and is a page by itself: only decompressing tells its size); compressible ones of 10 KiB (sized one by one).
 */
function blobs(): (string | null)[] {
  const hex = () => randomBytes(10 * KiB).toString('hex');
  const out: (string | null)[] = [];
  for (let round = 0; round < 5; round++) {
    out.push(null, hex(), hex(), 'a'.repeat(100 * KiB), null, 'b'.repeat(10 * KiB), null, 'c'.repeat(10 * KiB), hex(), null, hex(), hex(), hex());
  }
  return out;
}

describe.each(backendNames)('pages bounded by bytes (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', READ_PAGE_MAX_BYTES: String(BUDGET), EXPORT_PAGE_ROWS: '1000', INGEST_MAX_EVENT_BYTES: String(1024 * KiB) });
  let org: TestOrg;
  let seqs: number[];

  beforeAll(async () => {
    org = await createOrg(app.url);
    const list = blobs();
    // One request per event: every request stays far below the body limit.
    for (const [i, blob] of list.entries()) {
      const r = await postEvents(app.url, org.key, [toolCall(i, { sessionId: null, metadata: blob === null ? { i } : { i, blob } })]);
      expect(r.status).toBe(200);
    }
    const rows = await app.ctx.db.query<{ seq: number }>('SELECT seq FROM audit_events WHERE org_id = $1 ORDER BY seq', [org.id]);
    seqs = rows.rows.map((r) => Number(r.seq));
    expect(seqs.length).toBeGreaterThanOrEqual(list.length);
    // Both ways of sizing are exercised: large values stored compressed and stored as they are.
    const stored = await app.ctx.db.query<{ compressed: number; plain: number }>(
      `SELECT count(*) FILTER (WHERE pg_column_compression(metadata) IS NOT NULL)::int AS compressed,
              count(*) FILTER (WHERE pg_column_compression(metadata) IS NULL AND pg_column_size(metadata) > 10000)::int AS plain
       FROM audit_events WHERE org_id = $1`,
      [org.id],
    );
    expect(stored.rows[0].compressed).toBeGreaterThanOrEqual(15);
    expect(stored.rows[0].plain).toBeGreaterThanOrEqual(30);
  }, 120_000);

  /** Every page of the listing from the start, following nextCursor. */
  async function allPages(order: 'asc' | 'desc'): Promise<Item[][]> {
    const pages: Item[][] = [];
    let cursor: string | null = null;
    do {
      const q: string = `limit=1000&order=${order}${cursor ? `&cursor=${cursor}` : ''}`;
      const r = await http(`${app.url}/api/v1/audit-events?${q}`, { headers: bearer(org.key) });
      expect(r.status, q).toBe(200);
      pages.push(r.body.items);
      cursor = r.body.nextCursor;
      expect(pages.length).toBeLessThan(200);
    } while (cursor !== null);
    return pages;
  }

  it('cuts listing pages by bytes, each continuing exactly where the last stopped, in both orders', async () => {
    for (const order of ['asc', 'desc'] as const) {
      const pages = await allPages(order);
      const got = pages.flat().map((e) => e.seq);
      // Every event once, in order: nothing skipped or repeated at a cut.
      expect(got).toEqual(order === 'asc' ? seqs : [...seqs].reverse());
      // Far more pages than a page of 1,000 rows needs: the budget cut them.
      expect(pages.length).toBeGreaterThan(10);
      for (const page of pages) {
        expect(page.length).toBeGreaterThan(0);
        // A page of several events stays within the budget; only an event larger than it is a page by itself.
        const bytes = page.reduce((n, e) => n + JSON.stringify(e).length, 0);
        if (page.length > 1) expect(bytes, `${order} page at ${page[0].seq}`).toBeLessThanOrEqual(BUDGET);
        if (page.some((e) => (e.metadata.blob?.length ?? 0) >= 100 * KiB)) expect(page).toHaveLength(1);
      }
    }
  });

  it('ends a page before an event of unknown size that does not fit after it, and continues with that event alone', async () => {
    const first = await http(`${app.url}/api/v1/audit-events?limit=1000&order=asc`, { headers: bearer(org.key) });
    expect(first.body.items.map((e: Item) => e.seq)).toEqual(seqs.slice(0, 3));
    expect(first.body.nextCursor).toBe(String(seqs[2]));
    const second = await http(`${app.url}/api/v1/audit-events?limit=1000&order=asc&cursor=${first.body.nextCursor}`, { headers: bearer(org.key) });
    expect(second.body.items.map((e: Item) => e.seq)).toEqual([seqs[3]]);
    expect(second.body.items[0].metadata.blob).toHaveLength(100 * KiB);
    expect(second.body.nextCursor).toBe(String(seqs[3]));
  });

  it('keeps the row limit and the filters, and says more follow only when they do', async () => {
    const small = await http(`${app.url}/api/v1/audit-events?limit=2&order=asc`, { headers: bearer(org.key) });
    expect(small.body.items.map((e: Item) => e.seq)).toEqual(seqs.slice(0, 2));
    expect(small.body.nextCursor).toBe(String(seqs[1]));
    const last = await http(`${app.url}/api/v1/audit-events?limit=1000&order=asc&cursor=${seqs[seqs.length - 3]}`, { headers: bearer(org.key) });
    expect(last.body.items.map((e: Item) => e.seq)).toEqual(seqs.slice(-2));
    expect(last.body.nextCursor).toBeNull();
  });

  it('exports every event once in seq order in pages cut by bytes', async () => {
    const before = await metric(app.url, 'audit_stream_read_pages_cut_by_bytes_total');
    const res = await fetch(`${app.url}/api/v1/audit-events/export`, { headers: bearer(org.key) });
    expect(res.status).toBe(200);
    const lines = (await res.text()).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Item);
    expect(lines.map((e) => e.seq)).toEqual(seqs);
    // 65 events, 1.3 MiB, in pages of at most 64 KiB: at least a dozen pages were cut.
    expect((await metric(app.url, 'audit_stream_read_pages_cut_by_bytes_total')) - before).toBeGreaterThanOrEqual(12);
  });
});

describe.each(backendNames)('stream replay pages bounded by bytes (%s)', (backendName) => {
  // A budget of 2 KiB holds about seven tool calls: a replay of 120 is read in many pages.
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', READ_PAGE_MAX_BYTES: '2048' });

  it('replays every event after Last-Event-ID once, in order, reading pages cut by bytes', async () => {
    const org = await createOrg(app.url);
    expect((await postEvents(app.url, org.key, Array.from({ length: 120 }, (_, i) => toolCall(i, { sessionId: null })))).status).toBe(200);
    const before = await metric(app.url, 'audit_stream_read_pages_cut_by_bytes_total');
    const c = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': '0' });
    expect(c.status).toBe(200);
    await c.waitForCount(120);
    expect(c.events.map((e) => Number(e.id))).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect((await metric(app.url, 'audit_stream_read_pages_cut_by_bytes_total')) - before).toBeGreaterThanOrEqual(10);
    c.close();
  });
});
