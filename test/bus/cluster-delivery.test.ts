// Two instances on one Postgres and a private Redis Cluster (three masters, one replica each): 50 organizations spread
// over every master stream on both instances with nothing lost or repeated, each batch published only to the shard
// that owns its organization, an org's anomaly keys on that shard, a control message reaching the other instance, and
// a killed shard subscriber connection re-established with the gap filled.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, http, postEvents, startApp, toolCall, type RunningApp, type TestOrg } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/backends.js';
import { startPrivateRedisCluster, type PrivateRedisCluster } from '../helpers/private-redis-cluster.js';
import { openSse, seqs, type SseClient } from '../helpers/sse.js';

const ORGS = 50;
const BATCHES_PER_ORG = 4;
const EVENTS_PER_BATCH = 5;

/** A counter's value in an instance's /metrics text (0 when absent). */
async function metric(app: RunningApp, name: string): Promise<number> {
  const text = (await http(`${app.url}/metrics`)).body as string;
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** Polls a metric-based condition: /metrics has no event to wait on. */
async function until(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectExactly(c: SseClient, from: number, to: number, what: string) {
  expect(seqs(c), what).toEqual(Array.from({ length: to - from + 1 }, (_, i) => from + i));
}

describe.runIf(Boolean(process.env.TEST_DATABASE_URL))('bus on a Redis Cluster (sharded pub/sub), two instances', () => {
  let cluster: PrivateRedisCluster;
  let db: { url: string; drop(): Promise<void> };
  let a: RunningApp;
  let b: RunningApp;
  const prefix = `as-cl-${randomBytes(4).toString('hex')}:`;
  const channelOf = (orgId: string) => `${prefix}{${orgId}}:events`;

  beforeAll(async () => {
    cluster = await startPrivateRedisCluster();
    db = await createTestDatabase();
    // No anomaly events (their seqs would interleave); the detector still counts every tool call in the cluster.
    const env = { DATABASE_URL: db.url, REDIS_CLUSTER_NODES: cluster.seeds, REDIS_PREFIX: prefix, ANOMALY_MIN_RATE: '1000000000', AUTH_RECHECK_MS: '3600000' };
    a = await startApp(env);
    b = await startApp(env);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await cluster?.stop();
    await db?.drop();
  });

  it('streams 50 orgs spread over every master on both instances, once each and in order, each batch only on its shard', async () => {
    const orgs: TestOrg[] = [];
    for (let i = 0; i < ORGS; i++) orgs.push(await createOrg(i % 2 ? b.url : a.url));
    const masterOf = new Map<string, number>();
    for (const o of orgs) masterOf.set(o.id, (await cluster.masterOf(channelOf(o.id))).port);
    const masters = (await cluster.topology()).filter((n) => n.role === 'master').map((n) => n.port);
    expect(masters).toHaveLength(3);
    for (const m of masters) expect([...masterOf.values()].filter((p) => p === m).length, `orgs on master ${m}`).toBeGreaterThan(0);

    const clients = new Map<string, SseClient[]>();
    for (const o of orgs) clients.set(o.id, [await openSse(`${a.url}/api/v1/events`, bearer(o.key)), await openSse(`${b.url}/api/v1/events`, bearer(o.key))]);
    // Both instances subscribed each org's channel on the master that owns it, and only there.
    for (const m of masters) {
      const counts = await cluster.shardNumSub(m, orgs.map((o) => channelOf(o.id)));
      for (const o of orgs) expect(counts.get(channelOf(o.id)), `subscribers of org ${o.id} on master ${m}`).toBe(m === masterOf.get(o.id) ? 2 : 0);
    }

    const before = new Map<number, number>();
    for (const port of cluster.ports) before.set(port, await cluster.commandCalls(port, 'spublish'));
    const gapEventsBefore = (await metric(a, 'audit_stream_gap_filled_events_total')) + (await metric(b, 'audit_stream_gap_filled_events_total'));
    const classicBefore = await Promise.all(cluster.ports.map((p) => cluster.commandCalls(p, 'publish')));

    // Each org posts its batches one after another (one transaction, so one publish, per request) to one instance,
    // half of them to A and half to B; the orgs post at the same time. (Batches of one org posted to two instances in
    // turn can overtake each other between the instances; the receiver then fills the gap from Postgres, which the
    // check below would count.)
    await Promise.all(
      orgs.map(async (o, k) => {
        for (let i = 0; i < BATCHES_PER_ORG; i++) {
          const batch = Array.from({ length: EVENTS_PER_BATCH }, (_, j) => toolCall(i * EVENTS_PER_BATCH + j, { serverId: `srv-${k}` }));
          const r = await postEvents(k % 2 ? a.url : b.url, o.key, batch);
          expect(r.status).toBe(200);
        }
      }),
    );
    const total = BATCHES_PER_ORG * EVENTS_PER_BATCH;
    for (const o of orgs) {
      for (const [i, c] of clients.get(o.id)!.entries()) {
        await c.waitForCount(total, 30_000);
        expectExactly(c, 1, total, `org ${o.id} on instance ${i ? 'B' : 'A'}`);
        expect(c.events.every((e) => e.json.serverId === `srv-${orgs.indexOf(o)}`)).toBe(true);
      }
    }
    // The events came over the cluster's pub/sub. A feed's periodic check (every 5 s) may still read from Postgres a
    // batch whose message is a few ms behind its commit (more so on a loaded machine): it counts as a gap fill and the
    // late message is dropped. A transport that delivered nothing would make every event a gap fill.
    const gapEventsAfter = (await metric(a, 'audit_stream_gap_filled_events_total')) + (await metric(b, 'audit_stream_gap_filled_events_total'));
    expect(gapEventsAfter - gapEventsBefore).toBeLessThan((ORGS * 2 * total) / 4);

    // SPUBLISH ran on a master exactly once per batch of the orgs it owns: no batch went to another shard.
    const published = new Map<number, number>();
    for (const port of cluster.ports) published.set(port, (await cluster.commandCalls(port, 'spublish')) - before.get(port)!);
    for (const m of masters) {
      const owned = orgs.filter((o) => masterOf.get(o.id) === m).length;
      expect(published.get(m), `SPUBLISH on master ${m}`).toBe(owned * BATCHES_PER_ORG);
    }
    // And no classic PUBLISH, which a cluster would forward to every node.
    const classicAfter = await Promise.all(cluster.ports.map((p) => cluster.commandCalls(p, 'publish')));
    expect(classicAfter).toEqual(classicBefore);

    // The detector's keys of an org live in the slot of the org's channel, on the same master.
    const probe = orgs[0];
    const slot = await cluster.slotOf(channelOf(probe.id));
    const r = new Redis({ host: '127.0.0.1', port: masterOf.get(probe.id)! });
    try {
      const keys = (await r.cluster('GETKEYSINSLOT', slot, 100)) as string[];
      expect(keys.filter((k) => k.startsWith(`${prefix}anomaly:{${probe.id}}:`)).length).toBeGreaterThan(0);
    } finally {
      r.disconnect();
    }
    for (const cs of clients.values()) cs.forEach((c) => c.close());
  });

  it('delivers a control message to the other instance: a key revoked on A ends its stream on B at once', async () => {
    const org = await createOrg(a.url);
    const onB = await openSse(`${b.url}/api/v1/events`, bearer(org.key));
    expect(onB.status).toBe(200);
    const revoked = await http(`${a.url}/api/v1/admin/api-keys/${org.keyId}`, { method: 'DELETE', headers: { authorization: 'Bearer test-admin-token-0123456789' } });
    expect(revoked.status).toBe(204);
    // AUTH_RECHECK_MS is an hour: only the control message can end it.
    await onB.ended;
    expect(onB.comments.join('\n')).toContain('API key revoked');
  });

  it('re-establishes a killed shard subscriber connection, signals it, and fills the gap: nothing lost', async () => {
    const org = await createOrg(a.url);
    const master = (await cluster.masterOf(channelOf(org.id))).port;
    const onA = await openSse(`${a.url}/api/v1/events`, bearer(org.key));
    const onB = await openSse(`${b.url}/api/v1/events`, bearer(org.key));
    const reconnectsBefore = { a: await metric(a, 'audit_stream_bus_reconnects_total'), b: await metric(b, 'audit_stream_bus_reconnects_total') };
    expect((await postEvents(a.url, org.key, [toolCall(1), toolCall(2)])).status).toBe(200);
    await onB.waitForCount(2);

    // Kill both instances' shard subscriber connections on the org's master, then post while they are away.
    const admin = new Redis({ host: '127.0.0.1', port: master });
    try {
      const list = (await admin.client('LIST')) as string;
      const ids = list
        .split('\n')
        .filter((l) => (/\bname=(\S*)/.exec(l)?.[1] ?? '') === `ioredis-cluster(ssubscriber):${prefix}sub`)
        .map((l) => /\bid=(\d+)/.exec(l)![1]);
      expect(ids.length).toBe(2);
      for (const id of ids) await admin.client('KILL', 'ID', id);
    } finally {
      admin.disconnect();
    }
    for (let i = 0; i < 5; i++) expect((await postEvents(i % 2 ? a.url : b.url, org.key, [toolCall(10 + i)])).status).toBe(200);
    await onA.waitForCount(7, 30_000);
    await onB.waitForCount(7, 30_000);
    expectExactly(onA, 1, 7, 'A');
    expectExactly(onB, 1, 7, 'B');
    // The resubscribed signal fires on each instance once its shard subscriber is back (the stream hub counts it).
    await until(async () => (await metric(a, 'audit_stream_bus_reconnects_total')) > reconnectsBefore.a, 'the resubscribed signal on A');
    await until(async () => (await metric(b, 'audit_stream_bus_reconnects_total')) > reconnectsBefore.b, 'the resubscribed signal on B');
    // Both instances are subscribed again on the master, on their new connections, and live delivery goes on.
    expect((await cluster.shardNumSub(master, [channelOf(org.id)])).get(channelOf(org.id))).toBe(2);
    expect((await postEvents(a.url, org.key, [toolCall(20)])).status).toBe(200);
    await onB.waitForCount(8);
    expectExactly(onB, 1, 8, 'B after');
    onA.close();
    onB.close();
  });
});
