// readBytePage on both backends, over a mix of small events, large ones stored as they are, large compressed ones and
// events with shared metadata: for any order, row limit, byte budget and starting point, paging to the end yields every
// event once, in order, each page within its limits (one event larger than the budget being a page by itself).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listedEventBytesSql, readBytePage, type BytePage } from '../../src/audit/byte-pages.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDb } from '../../src/db/pg-db.js';
import { createPgliteDb } from '../../src/db/pglite-db.js';
import { backendNames, createTestDatabase } from '../helpers/backends.js';

const EVENTS = 90;

type Row = { seq: number | string; metadata: { i: number } };

describe.each(backendNames)('readBytePage (%s)', (backendName) => {
  let db: Db;
  let cleanup: () => Promise<void>;
  let orgId: string;
  /** Each event's seq and exact weight (listedEventBytesSql), in seq order. */
  let events: { seq: number; bytes: number }[];

  beforeAll(async () => {
    if (backendName === 'real') {
      const t = await createTestDatabase();
      db = createPgDb({ connectionString: t.url, max: 2 });
      cleanup = t.drop;
    } else {
      const dir = await mkdtemp(path.join(tmpdir(), 'audit-stream-pages-'));
      db = await createPgliteDb(dir);
      cleanup = () => rm(dir, { recursive: true, force: true });
    }
    await migrate(db);
    orgId = (await db.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ('pages') RETURNING id`)).rows[0].id;
    await db.query(`INSERT INTO audit_contexts (org_id, id, digest, last_seq, context) VALUES ($1, 1, '\\x01', $2, jsonb_build_object('source_detail', repeat('g', 300)))`, [orgId, EVENTS]);
    // By seq: every fifth small, every fifth 3–40 KB of random hex (stored as it is), every fifth 3–60 KB of one letter
    // (stored compressed), every fifth small with shared metadata, every fifth one of 20–200 KB compressed.
    await db.query(
      `INSERT INTO audit_events (org_id, seq, occurred_at, source, type, server_id, tool_name, action, metadata, context_id, dedupe_key)
       SELECT $1, g, now(), 'raw', 'tool_call', 'srv', 'tool', 'allow',
         CASE g % 5
           WHEN 0 THEN jsonb_build_object('i', g)
           WHEN 1 THEN jsonb_build_object('i', g, 'hex', (SELECT string_agg(md5(g::text || k::text), '') FROM generate_series(1, 100 + (g * 37) % 1150) AS k))
           WHEN 2 THEN jsonb_build_object('i', g, 'same', repeat('s', 3000 + (g * 911) % 57000))
           WHEN 3 THEN jsonb_build_object('i', g)
           ELSE jsonb_build_object('i', g, 'same', repeat('t', 20000 + (g * 7919) % 180000))
         END,
         CASE WHEN g % 5 = 3 THEN 1 END, audit_dedupe_digest('p-' || g)
       FROM generate_series(1, $2::int) AS g`,
      [orgId, EVENTS],
    );
    const r = await db.query<{ seq: number; bytes: number; compressed: boolean }>(
      `SELECT e.seq, ${listedEventBytesSql('e')} AS bytes, pg_column_compression(e.metadata) IS NOT NULL AS compressed FROM audit_events e WHERE e.org_id = $1 ORDER BY e.seq`,
      [orgId],
    );
    events = r.rows.map((x) => ({ seq: Number(x.seq), bytes: Number(x.bytes) }));
    expect(events).toHaveLength(EVENTS);
    expect(r.rows.filter((x) => x.compressed).length).toBeGreaterThanOrEqual(30);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
    await cleanup?.();
  });

  it('pages through everything once, in order, within the row limit and the byte budget', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('asc' as const, 'desc' as const),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1024, max: 256 * 1024 }),
        fc.integer({ min: 0, max: EVENTS }),
        async (order, limit, maxBytes, start) => {
          const expected = (order === 'asc' ? events.filter((e) => e.seq > start) : [...events].reverse().filter((e) => e.seq <= EVENTS - start));
          const got: number[] = [];
          let cursor: number | null = order === 'asc' ? start : EVENTS - start + 1;
          for (let pages = 0; cursor !== null; pages++) {
            expect(pages).toBeLessThanOrEqual(EVENTS);
            const page: BytePage<Row> = await readBytePage<Row>(db, {
              where: ['org_id = $1', order === 'asc' ? 'seq > $2' : 'seq < $2'],
              params: [orgId, cursor],
              order,
              limit,
              maxBytes,
            });
            const seqs: number[] = page.rows.map((x) => Number(x.seq));
            // The rows are whole: their metadata was read out.
            expect(page.rows.map((x) => x.metadata.i)).toEqual(seqs);
            got.push(...seqs);
            expect(seqs.length).toBeLessThanOrEqual(limit);
            const bytes = seqs.reduce((n, s) => n + events[s - 1].bytes, 0);
            // Headers and decompressed copies differ by a few bytes of varlena header per value.
            if (seqs.length > 1) expect(bytes).toBeLessThanOrEqual(maxBytes + 8 * seqs.length);
            const more: boolean = page.cutByBytes || seqs.length === limit;
            if (page.cutByBytes) expect(seqs.length).toBeLessThan(limit);
            cursor = more && seqs.length ? seqs[seqs.length - 1] : null;
          }
          expect(got).toEqual(expected.map((e) => e.seq));
        },
      ),
      { numRuns: backendName === 'real' ? 40 : 25 },
    );
  }, 300_000);
});
