// OrgFeed on its own, with real storage and bus, over real sockets of a bare http.Server: live delivery, gap filling,
// replay and its window, and attach/detach. Every client gets every event once, in seq order.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewAuditEvent, PublishedBatch } from '../../src/audit/audit-types.js';
import { appendInTransaction } from '../../src/audit/event-log/append.js';
import { copySink } from '../../src/audit/event-log/copy-sink.js';
import { createBus, type Bus } from '../../src/bus/create-bus.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDb } from '../../src/db/pg-db.js';
import { createPgliteDb } from '../../src/db/pglite-db.js';
import { createOrgReadSlots } from '../../src/db/org-read-slots.js';
import { createMetrics, type Metrics } from '../../src/metrics/metrics.js';
import { raiseRetentionMark } from '../../src/retention/retention-repo.js';
import { OrgFeed } from '../../src/stream/org-feed.js';
import { primaryOnly } from '../../src/db/read-replica.js';
import { SseConnection } from '../../src/stream/sse-connection.js';
import { backendNames, createTestDatabase } from '../helpers/backends.js';
import { startBareSseServer, type BareSseServer } from '../helpers/bare-sse-server.js';
import { openSse, seqs, type SseClient } from '../helpers/sse.js';

const logger = pino({ level: 'silent' });

describe.each(backendNames)('OrgFeed (%s)', (backendName) => {
  let db: Db;
  let bus: Bus;
  let server: BareSseServer;
  let cleanup: () => Promise<void>;
  const feeds: OrgFeed[] = [];

  beforeAll(async () => {
    if (backendName === 'real') {
      const t = await createTestDatabase();
      db = createPgDb({ connectionString: t.url, max: 4 });
      bus = createBus({ REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_CLUSTER_NODES: [], REDIS_PREFIX: `as-test-${randomBytes(6).toString('hex')}:` }, logger);
      cleanup = t.drop;
    } else {
      const dir = await mkdtemp(path.join(tmpdir(), 'audit-stream-feed-'));
      db = await createPgliteDb(dir);
      bus = createBus({ REDIS_CLUSTER_NODES: [], REDIS_PREFIX: '' }, logger);
      cleanup = () => rm(dir, { recursive: true, force: true });
    }
    await migrate(db);
    server = await startBareSseServer();
  });
  afterAll(async () => {
    for (const f of feeds) f.close();
    await server?.close();
    await bus?.close();
    await db?.close();
    await cleanup?.();
  });

  async function newOrg(): Promise<string> {
    const r = await db.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ('feed test') RETURNING id`);
    return r.rows[0].id;
  }

  let n = 0;
  /** Stores `count` tool calls for the org (one transaction) and returns the batch a commit publishes. */
  async function store(orgId: string, count: number): Promise<PublishedBatch> {
    const events: NewAuditEvent[] = Array.from({ length: count }, () => ({
      type: 'tool_call', source: 'raw', occurredAt: new Date(), serverId: 'srv', sessionId: null, toolName: 't', action: 'allow', latencyMs: 1, metadata: {}, dedupeKey: `raw:id:feed-${n++}`,
    }));
    return (await db.transaction(async (tx) => appendInTransaction(tx, orgId, { events }, copySink))).batch!;
  }

  async function feedOf(orgId: string, replayLimit = 10_000, opts: { db?: Db; recentWindowBytes?: number; metrics?: Metrics } = {}): Promise<OrgFeed> {
    const feed = new OrgFeed(orgId, { db: opts.db ?? db, replica: primaryOnly(opts.db ?? db), transport: bus.transport, logger, metrics: opts.metrics ?? createMetrics(), replayLimit, recentWindowBytes: opts.recentWindowBytes ?? 0, reads: createOrgReadSlots({ slots: 2, queueMax: 64 }), pageMaxBytes: 1024 * 1024 });
    feeds.push(feed);
    await feed.ready;
    return feed;
  }

  /** The server side of a new client's stream (not attached yet), with a generous buffer limit. */
  async function connect(feed: OrgFeed): Promise<{ client: SseClient; conn: SseConnection; res: ServerResponse }> {
    const response = server.nextResponse();
    const client = await openSse(server.url);
    const res = await response;
    const conn = new SseConnection(res, { orgId: feed.orgId, keyId: null, userId: null, loginSessionId: null }, { types: null, serverId: null }, { bufferLimitBytes: 64 << 20, drainTimeoutMs: 30_000 }, (c) => feed.detach(c), () => undefined);
    return { client, conn, res };
  }

  /** A client whose stream is attached to `feed`, resuming after `lastEventId` when given. */
  async function attach(feed: OrgFeed, lastEventId: number | null): Promise<{ client: SseClient; conn: SseConnection; res: ServerResponse }> {
    const c = await connect(feed);
    await feed.attach(c.conn, lastEventId);
    return c;
  }

  /** The database with its queries counted and, while `failing` is set, every read of a seq range refused. */
  function watched(): { db: Db; queries: () => number; failing: { on: boolean } } {
    let queries = 0;
    const failing = { on: false };
    const wrapped: Db = Object.assign(Object.create(db) as Db, {
      query: async (sql: string, params?: unknown[]) => {
        queries++;
        if (failing.on && /ORDER BY seq LIMIT/.test(sql)) throw Object.assign(new Error('connection refused (test)'), { code: 'ECONNREFUSED' });
        return db.query(sql, params);
      },
    });
    return { db: wrapped, queries: () => queries, failing };
  }

  const resumesFrom = async (metrics: Metrics, from: 'memory' | 'database') => (await metrics.resumes.get()).values.find((v) => v.labels.from === from)?.value ?? 0;

  const upTo = (k: number) => Array.from({ length: k }, (_, i) => i + 1);

  it('delivers published batches live, and fills a gap the bus missed from the database first', async () => {
    const orgId = await newOrg();
    const feed = await feedOf(orgId);
    const { client } = await attach(feed, null);
    await bus.transport.publish(await store(orgId, 3));
    await client.waitForCount(3);
    await store(orgId, 2); // committed, its publish lost
    await bus.transport.publish(await store(orgId, 2));
    await client.waitForCount(7);
    expect(seqs(client)).toEqual(upTo(7));
    expect(feed.lastSeq).toBe(7);
    client.close();
  });

  it('catches up from the database when asked, without any publish', async () => {
    const orgId = await newOrg();
    const feed = await feedOf(orgId);
    const { client } = await attach(feed, null);
    await store(orgId, 4);
    await feed.catchUp(true);
    await client.waitForCount(4);
    expect(seqs(client)).toEqual(upTo(4));
    client.close();
  });

  it('replays after Last-Event-ID, then goes live with nothing twice and nothing lost', async () => {
    const orgId = await newOrg();
    const feed = await feedOf(orgId);
    await store(orgId, 2500); // more than one page
    const attaching = attach(feed, 1000);
    const live = store(orgId, 5).then((b) => bus.transport.publish(b)); // may land during the replay: it waits in the queue
    const { client } = await attaching;
    await live;
    await client.waitForCount(1505, 30_000);
    expect(seqs(client)).toEqual(upTo(2505).slice(1000));
    client.close();
  });

  it('replays only the window, announcing the skipped range with a reset comment; an id ahead is reset too', async () => {
    const orgId = await newOrg();
    const feed = await feedOf(orgId, 3);
    await store(orgId, 6);
    const old = await attach(feed, 1);
    await old.client.waitForCount(3);
    expect(seqs(old.client)).toEqual([4, 5, 6]);
    expect(old.client.comments.some((c) => c.startsWith('reset: events 2..3 are beyond the replay window of 3'))).toBe(true);

    const ahead = await attach(feed, 50);
    await bus.transport.publish(await store(orgId, 1));
    await ahead.client.waitForCount(1);
    expect(seqs(ahead.client)).toEqual([7]);
    expect(ahead.client.comments.some((c) => c.startsWith('reset: Last-Event-ID 50 is ahead'))).toBe(true);
    old.client.close();
    ahead.client.close();
  });

  it('announces events that retention removes while a replay is running, and goes on with the oldest kept one', async () => {
    const orgId = await newOrg();
    await store(orgId, 2500);
    // The real database, with a removal of seqs 1..2000 (as a retention pass does) committed just before the replay
    // reads its second page: the first page (1..1000) has been sent, 1001..2000 are gone when the reader gets there.
    let pageReads = 0;
    const racing: Db = Object.assign(Object.create(db) as Db, {
      query: async (sql: string, params?: unknown[]) => {
        if (/ORDER BY seq LIMIT/.test(sql) && ++pageReads === 2) {
          await raiseRetentionMark(db, orgId, 2000);
          await db.query('DELETE FROM audit_events WHERE org_id = $1 AND seq <= 2000', [orgId]);
        }
        return db.query(sql, params);
      },
    });
    const feed = new OrgFeed(orgId, { db: racing, replica: primaryOnly(racing), transport: bus.transport, logger, metrics: createMetrics(), replayLimit: 10_000, recentWindowBytes: 0, reads: createOrgReadSlots({ slots: 2, queueMax: 64 }), pageMaxBytes: 1024 * 1024 });
    feeds.push(feed);
    await feed.ready;
    const { client } = await attach(feed, 0);
    await client.waitForCount(1500, 30_000);
    expect(seqs(client)).toEqual([...upTo(1000), ...upTo(2500).slice(2000)]);
    expect(client.comments.filter((c) => c.startsWith('reset:'))).toEqual(['reset: events 1001..2000 are no longer kept (retention). Continuing from 2001']);
    client.close();
  });

  it('serves a resume the recent window covers without a database query, then live', async () => {
    const orgId = await newOrg();
    const w = watched();
    const metrics = createMetrics();
    const feed = await feedOf(orgId, 10_000, { db: w.db, recentWindowBytes: 1 << 20, metrics });
    const live = await attach(feed, null);
    for (let i = 0; i < 4; i++) await bus.transport.publish(await store(orgId, 25));
    await live.client.waitForCount(100);
    const queriesBefore = w.queries();
    const resumed = await attach(feed, 37);
    await resumed.client.waitForCount(63);
    expect(seqs(resumed.client)).toEqual(upTo(100).slice(37));
    expect(w.queries()).toBe(queriesBefore);
    expect(await resumesFrom(metrics, 'memory')).toBe(1);
    expect(await resumesFrom(metrics, 'database')).toBe(0);
    await bus.transport.publish(await store(orgId, 2));
    await resumed.client.waitForCount(65);
    expect(seqs(resumed.client)).toEqual(upTo(102).slice(37));
    live.client.close();
    resumed.client.close();
  });

  it('never serves past a gap it could not fill: a resume gets what follows the gap only after the gap', async () => {
    const orgId = await newOrg();
    const w = watched();
    const metrics = createMetrics();
    const feed = await feedOf(orgId, 10_000, { db: w.db, recentWindowBytes: 1 << 20, metrics });
    const live = await attach(feed, null);
    await bus.transport.publish(await store(orgId, 3));
    await live.client.waitForCount(3);
    // 4..5 committed, their publish lost; the database refuses reads when 6..7 arrive, so the gap stays open.
    await store(orgId, 2);
    w.failing.on = true;
    await bus.transport.publish(await store(orgId, 2));
    await expect.poll(async () => (await metrics.gapFills.get()).values[0]?.value ?? 0).toBe(1);
    await feed.catchUp(); // queued behind the failed fill: the feed has taken the batch in by now
    const resumed = await attach(feed, 1);
    await resumed.client.waitForCount(2);
    expect(await resumesFrom(metrics, 'memory')).toBe(1);
    w.failing.on = false;
    await feed.catchUp(true);
    await resumed.client.waitForCount(6);
    await live.client.waitForCount(7);
    expect(seqs(resumed.client)).toEqual([2, 3, 4, 5, 6, 7]);
    expect(seqs(live.client)).toEqual(upTo(7));
    live.client.close();
    resumed.client.close();
  });

  it('goes on from the database, exactly, when the window drops what a slow resume has not taken yet', async () => {
    const orgId = await newOrg();
    const metrics = createMetrics();
    const feed = await feedOf(orgId, 10_000, { recentWindowBytes: 16 * 1024, metrics });
    const live = await attach(feed, null);
    for (let i = 0; i < 3; i++) await bus.transport.publish(await store(orgId, 20));
    await live.client.waitForCount(60);
    // A client that has stopped reading, its socket already full: its resume sends one batch, then waits for it to drain.
    const slow = await connect(feed);
    slow.client.pause();
    const filler = Buffer.from(`: ${'f'.repeat(1 << 16)}\n\n`);
    while (slow.res.writableLength < 1 << 20) {
      slow.res.write(filler);
      await new Promise((r) => setImmediate(r));
    }
    const attaching = feed.attach(slow.conn, 0);
    // Meanwhile more than the window's bytes are delivered: the batches the slow resume still needs are dropped.
    for (let i = 0; i < 8; i++) await bus.transport.publish(await store(orgId, 20));
    await live.client.waitForCount(220);
    slow.client.resume();
    await attaching;
    await slow.client.waitForCount(220, 30_000);
    expect(seqs(slow.client)).toEqual(upTo(220));
    expect(await resumesFrom(metrics, 'memory')).toBe(1);
    expect(await resumesFrom(metrics, 'database')).toBe(1);
    live.client.close();
    slow.client.close();
  });

  it('counts its connections: detach reports when the last one has gone', async () => {
    const orgId = await newOrg();
    const feed = await feedOf(orgId);
    const a = await attach(feed, null);
    const b = await attach(feed, null);
    expect(feed.size).toBe(2);
    expect(feed.detach(a.conn)).toBe(false);
    expect(feed.detach(b.conn)).toBe(true);
    expect(feed.size).toBe(0);
    a.client.close();
    b.client.close();
  });
});
