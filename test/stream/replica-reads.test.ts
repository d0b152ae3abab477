// Replay and gap filling read ranges that a replica may not have yet: a seq missing from a read is announced as
// removed only when retention removed it, never because a page came back short. The "replica" here is a real Postgres
// snapshot taken before the last commits (what a replica behind the primary shows: a prefix of the commits).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { appendInTransaction } from '../../src/audit/event-log/append.js';
import { copySink } from '../../src/audit/event-log/copy-sink.js';
import { createBus, type Bus } from '../../src/bus/create-bus.js';
import type { Db, QueryResult } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDb } from '../../src/db/pg-db.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { raiseRetentionMark } from '../../src/retention/retention-repo.js';
import { createOrgReadSlots } from '../../src/db/org-read-slots.js';
import { OrgFeed } from '../../src/stream/org-feed.js';
import { primaryOnly } from '../../src/db/read-replica.js';
import { SseConnection } from '../../src/stream/sse-connection.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { startBareSseServer, type BareSseServer } from '../helpers/bare-sse-server.js';
import { openSse, seqs } from '../helpers/sse.js';

const logger = pino({ level: 'silent' });

describe.runIf(realBackendAvailable)('reads from a replica behind the primary (Postgres)', () => {
  let primary: Db;
  let url: string;
  let bus: Bus;
  let server: BareSseServer;
  let drop: () => Promise<void>;
  const feeds: OrgFeed[] = [];
  const snapshots: pg.Client[] = [];

  beforeAll(async () => {
    const t = await createTestDatabase();
    url = t.url;
    drop = t.drop;
    primary = createPgDb({ connectionString: t.url, max: 4 });
    bus = createBus({ REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_CLUSTER_NODES: [], REDIS_PREFIX: `as-test-${randomBytes(6).toString('hex')}:` }, logger);
    await migrate(primary);
    server = await startBareSseServer();
  });
  afterAll(async () => {
    for (const f of feeds) f.close();
    for (const c of snapshots) await c.end().catch(() => undefined);
    await server?.close();
    await bus?.close();
    await primary?.close();
    await drop?.();
  });

  let n = 0;
  async function store(orgId: string, count: number): Promise<void> {
    const events: NewAuditEvent[] = Array.from({ length: count }, () => ({
      type: 'tool_call', source: 'raw', occurredAt: new Date(), serverId: 'srv', toolName: 't', action: 'allow', latencyMs: 1, metadata: {}, dedupeKey: `raw:id:replica-${n++}`,
    }));
    await primary.transaction((tx) => appendInTransaction(tx, orgId, { events }, copySink));
  }

  /**
   * A database whose event reads see the commits up to now only (a REPEATABLE READ snapshot, as a replica behind the
   * primary would), while the organization's counter is read from the primary (where writes go).
   */
  async function replicaAsOfNow(): Promise<Db> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    snapshots.push(client);
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await client.query('SELECT 1 FROM audit_events LIMIT 1');
    return Object.assign(Object.create(primary) as Db, {
      async query<R>(sql: string, params?: unknown[]): Promise<QueryResult<R>> {
        if (sql.startsWith('SELECT event_seq FROM organizations')) return primary.query<R>(sql, params);
        const r = await client.query(sql, params);
        return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 };
      },
    });
  }

  async function attach(feed: OrgFeed, lastEventId: number) {
    const res = server.nextResponse();
    const client = await openSse(server.url);
    const conn = new SseConnection(await res, { orgId: feed.orgId, keyId: null, userId: null, loginSessionId: null }, { types: null, serverId: null }, { bufferLimitBytes: 1 << 20, drainTimeoutMs: 30_000 }, (c) => feed.detach(c), () => undefined);
    await feed.attach(conn, lastEventId);
    return client;
  }

  async function feedOn(db: Db, orgId: string): Promise<OrgFeed> {
    const feed = new OrgFeed(orgId, { db, replica: primaryOnly(db), transport: bus.transport, logger, metrics: createMetrics(), replayLimit: 10_000, recentWindowBytes: 0, reads: createOrgReadSlots({ slots: 2, queueMax: 64 }), pageMaxBytes: 1024 * 1024 });
    feeds.push(feed);
    await feed.ready;
    return feed;
  }

  it('does not skip seqs the replica has not got yet: the replay stops (the client resumes) instead of jumping ahead', async () => {
    const orgId = (await primary.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ('replica') RETURNING id`)).rows[0].id;
    await store(orgId, 3);
    const replica = await replicaAsOfNow();
    await store(orgId, 4); // seqs 4..7: committed on the primary, not on the replica
    const feed = await feedOn(replica, orgId);
    const client = await attach(feed, 0);
    await client.ended;
    // Sent 1..3, then closed with a comment: nothing was announced as removed, and 4..7 were not skipped.
    expect(seqs(client)).toEqual([1, 2, 3]);
    expect(client.comments.some((c) => c.startsWith('reset:'))).toBe(false);
    expect(client.comments.some((c) => c.startsWith('replay failed'))).toBe(true);

    // Once the replica has them, a resume by id gets them all.
    const caughtUp = await feedOn(await replicaAsOfNow(), orgId);
    const again = await attach(caughtUp, 3);
    await again.waitForCount(4);
    expect(seqs(again)).toEqual([4, 5, 6, 7]);
    again.close();
  });

  it('announces as removed only the seqs at or below the retention mark', async () => {
    const orgId = (await primary.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ('replica retention') RETURNING id`)).rows[0].id;
    await store(orgId, 6);
    await raiseRetentionMark(primary, orgId, 2);
    await primary.query('DELETE FROM audit_events WHERE org_id = $1 AND seq <= 2', [orgId]);
    const feed = await feedOn(primary, orgId);
    const client = await attach(feed, 0);
    await client.waitForCount(4);
    expect(seqs(client)).toEqual([3, 4, 5, 6]);
    expect(client.comments.filter((c) => c.startsWith('reset:'))).toEqual(['reset: events 1..2 are no longer kept (retention). Continuing from 3']);
    client.close();
  });
});
