// A replay to a client that stopped reading, on both backends: the feed reads pages bounded by bytes (at most the
// buffer limit, as the hub sets it) and writes the next only once the client took the last, so what the connection holds
// stays within about one page however long the replay; the client that reads on gets every event once, in order.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ServerResponse } from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendInTransaction } from '../../src/audit/event-log/append.js';
import { copySink } from '../../src/audit/event-log/copy-sink.js';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { createMemoryTransport } from '../../src/bus/data-transport.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createOrgReadSlots } from '../../src/db/org-read-slots.js';
import { createPgDb } from '../../src/db/pg-db.js';
import { createPgliteDb } from '../../src/db/pglite-db.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { OrgFeed } from '../../src/stream/org-feed.js';
import { primaryOnly } from '../../src/db/read-replica.js';
import { SseConnection } from '../../src/stream/sse-connection.js';
import { backendNames, createTestDatabase } from '../helpers/backends.js';
import { startBareSseServer, type BareSseServer } from '../helpers/bare-sse-server.js';
import { openSse, seqs } from '../helpers/sse.js';

const EVENTS = 40_000;
const PAGE_BYTES = 16 * 1024;

describe.each(backendNames)('replay pages bounded by bytes (%s)', (backendName) => {
  let db: Db;
  let server: BareSseServer;
  let cleanup: () => Promise<void>;
  let orgId: string;

  beforeAll(async () => {
    if (backendName === 'real') {
      const t = await createTestDatabase();
      db = createPgDb({ connectionString: t.url, max: 4 });
      cleanup = t.drop;
    } else {
      const dir = await mkdtemp(path.join(tmpdir(), 'audit-stream-replay-'));
      db = await createPgliteDb(dir);
      cleanup = () => rm(dir, { recursive: true, force: true });
    }
    await migrate(db);
    server = await startBareSseServer();
    orgId = (await db.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ('replay') RETURNING id`)).rows[0].id;
    // About 7 MB of frames: more than the socket buffers between a server and a client that stopped reading hold.
    const events: NewAuditEvent[] = Array.from({ length: EVENTS }, (_, i) => ({
      type: 'tool_call', source: 'raw', occurredAt: new Date(), serverId: 'srv', sessionId: null, toolName: `tool-${'x'.repeat(40)}-${i % 7}`, action: 'allow', latencyMs: i % 100, metadata: {}, dedupeKey: `raw:id:replay-${i}`,
    }));
    await db.transaction(async (tx) => appendInTransaction(tx, orgId, { events }, copySink));
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    await db?.close();
    await cleanup?.();
  });

  it('holds about one page for a client that stopped reading', async () => {
    const metrics = createMetrics();
    const feed = new OrgFeed(orgId, {
      db,
      replica: primaryOnly(db),
      transport: createMemoryTransport(),
      recentWindowBytes: 0,
      logger: pino({ level: 'silent' }),
      metrics,
      replayLimit: EVENTS,
      reads: createOrgReadSlots({ slots: 2, queueMax: 64 }),
      pageMaxBytes: PAGE_BYTES,
    });
    await feed.ready;
    const responding = server.nextResponse();
    const client = await openSse(server.url);
    client.pause();
    const res: ServerResponse = await responding;
    const conn = new SseConnection(res, { orgId, keyId: null, userId: null, loginSessionId: null }, { types: null, serverId: null }, { bufferLimitBytes: PAGE_BYTES, drainTimeoutMs: 120_000 }, (c) => feed.detach(c), () => undefined);
    // Sample what the connection holds while the replay runs into the client that does not read.
    let held = 0;
    const sampler = setInterval(() => (held = Math.max(held, res.writableLength)), 2);
    const replay = feed.attach(conn, 0);
    let last = -1;
    for (let still = 0; still < 20; ) {
      await new Promise((r) => setTimeout(r, 25));
      const now = (await metrics.registry.getSingleMetric('audit_stream_sse_events_replayed_total')!.get()).values.find((v) => v.labels.from === 'database')?.value ?? 0;
      still = now === last ? still + 1 : 0;
      last = now;
    }
    clearInterval(sampler);
    held = Math.max(held, res.writableLength);
    // The replay stalled part way (the client holds the rest up), with one page at most waiting in the connection.
    expect(last).toBeGreaterThan(0);
    expect(last).toBeLessThan(EVENTS);
    expect(conn.closed).toBe(false);
    expect(held).toBeLessThanOrEqual(2 * PAGE_BYTES);
    // A replay of pages of 1,000 rows whatever their size held 221 KB here.
    const cuts = (await metrics.registry.getSingleMetric('audit_stream_read_pages_cut_by_bytes_total')!.get()).values[0]?.value ?? 0;
    expect(cuts).toBeGreaterThan(0);
    client.close();
    conn.close('client');
    await replay;
    feed.close();
  }, 180_000);

  it('sends every event once, in order, to a client that reads', async () => {
    const feed = new OrgFeed(orgId, {
      db,
      replica: primaryOnly(db),
      transport: createMemoryTransport(),
      recentWindowBytes: 0,
      logger: pino({ level: 'silent' }),
      metrics: createMetrics(),
      replayLimit: EVENTS,
      reads: createOrgReadSlots({ slots: 2, queueMax: 64 }),
      pageMaxBytes: PAGE_BYTES,
    });
    await feed.ready;
    const responding = server.nextResponse();
    const client = await openSse(server.url);
    const res = await responding;
    const conn = new SseConnection(res, { orgId, keyId: null, userId: null, loginSessionId: null }, { types: null, serverId: null }, { bufferLimitBytes: PAGE_BYTES, drainTimeoutMs: 120_000 }, (c) => feed.detach(c), () => undefined);
    await feed.attach(conn, EVENTS - 5000);
    await client.waitForCount(5000, 120_000);
    expect(seqs(client)).toEqual(Array.from({ length: 5000 }, (_, i) => EVENTS - 5000 + i + 1));
    client.close();
    feed.close();
  }, 180_000);
});
