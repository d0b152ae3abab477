// OrgFeed on its own, with real storage and bus, over real sockets of a bare http.Server: live delivery, gap filling,
// replay and its window, and attach/detach. Every client gets every event once, in seq order.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, lockOrgSeq } from '../../src/audit/audit-repo.js';
import type { NewAuditEvent, PublishedBatch } from '../../src/audit/audit-types.js';
import { createBus, type Bus } from '../../src/bus/create-bus.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDb } from '../../src/db/pg-db.js';
import { createPgliteDb } from '../../src/db/pglite-db.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { OrgFeed } from '../../src/stream/org-feed.js';
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
    return (await db.transaction(async (tx) => appendEvents(tx, orgId, await lockOrgSeq(tx, orgId), events)))!;
  }

  async function feedOf(orgId: string, replayLimit = 10_000): Promise<OrgFeed> {
    const feed = new OrgFeed(orgId, { db, transport: bus.transport, logger, metrics: createMetrics(), replayLimit });
    feeds.push(feed);
    await feed.ready;
    return feed;
  }

  /** A client whose stream is attached to `feed`, resuming after `lastEventId` when given. */
  async function attach(feed: OrgFeed, lastEventId: number | null): Promise<{ client: SseClient; conn: SseConnection }> {
    const res = server.nextResponse();
    const client = await openSse(server.url);
    const conn = new SseConnection(await res, { orgId: feed.orgId, keyId: null, userId: null, loginSessionId: null }, { types: null, serverId: null }, { bufferLimitBytes: 1 << 20, drainTimeoutMs: 30_000 }, (c) => feed.detach(c), () => undefined);
    await feed.attach(conn, lastEventId);
    return { client, conn };
  }

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
        if (/ORDER BY seq LIMIT/.test(sql) && ++pageReads === 2) await db.query('DELETE FROM audit_events WHERE org_id = $1 AND seq <= 2000', [orgId]);
        return db.query(sql, params);
      },
    });
    const feed = new OrgFeed(orgId, { db: racing, transport: bus.transport, logger, metrics: createMetrics(), replayLimit: 10_000 });
    feeds.push(feed);
    await feed.ready;
    const { client } = await attach(feed, 0);
    await client.waitForCount(1500, 30_000);
    expect(seqs(client)).toEqual([...upTo(1000), ...upTo(2500).slice(2000)]);
    expect(client.comments.filter((c) => c.startsWith('reset:'))).toEqual(['reset: events 1001..2000 are no longer kept (retention). Continuing from 2001']);
    client.close();
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
