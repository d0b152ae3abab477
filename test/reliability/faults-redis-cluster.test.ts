// Faults: a Redis Cluster master SIGKILLed while two instances ingest and stream; the cluster promotes its replica on its
// own. Pub/sub messages of the dead shard are lost; the instances fill the gap from Postgres once their shard
// subscribers are back, and every stream gets every event once, in order, on the connection it had.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, http, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/backends.js';
import { startPrivateRedisCluster, type PrivateRedisCluster } from '../helpers/private-redis-cluster.js';
import { checkOrg, checkTrafficStored, metric, openResilient, Traffic, until, type StreamExpectation } from './checker.js';
import { LogAudit } from './log-audit.js';
import { redisPrefix } from './processes.js';

describe.runIf(Boolean(process.env.TEST_DATABASE_URL))('Redis Cluster master killed mid-stream, replica promoted', () => {
  const audit = new LogAudit('faults-redis-cluster');
  let cluster: PrivateRedisCluster;
  let db: { url: string; drop(): Promise<void> };
  let a: RunningApp;
  let b: RunningApp;
  const prefix = redisPrefix('cluster');
  const channelOf = (orgId: string) => `${prefix}{${orgId}}:events`;
  const reconnects = async (app: RunningApp) => metric((await http(`${app.url}/metrics`)).body as string, 'audit_stream_bus_reconnects_total') ?? 0;

  beforeAll(async () => {
    cluster = await startPrivateRedisCluster({ nodeTimeoutMs: 2000 });
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, REDIS_CLUSTER_NODES: cluster.seeds, REDIS_PREFIX: prefix, SSE_HEARTBEAT_MS: '500' };
    a = await startApp(env);
    b = await startApp(env);
    audit.app('instance A', a);
    audit.app('instance B', b);
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await cluster?.stop();
    await db?.drop();
    audit.assertClean();
  });

  it('ingest keeps succeeding; streams of every shard, the failed one included, get every event once, in order', async () => {
    // Two orgs on each master, so the failed shard and the healthy ones are both watched.
    const masters = (await cluster.topology()).filter((n) => n.role === 'master').map((n) => n.port);
    const orgs: TestOrg[] = [];
    const masterOf = new Map<string, number>();
    for (let i = 0; i < 40 && masters.some((m) => [...masterOf.values()].filter((p) => p === m).length < 2); i++) {
      const org = await createOrg(a.url);
      const m = (await cluster.masterOf(channelOf(org.id))).port;
      if ([...masterOf.values()].filter((p) => p === m).length >= 2) continue;
      orgs.push(org);
      masterOf.set(org.id, m);
      audit.org(org);
    }
    expect(orgs).toHaveLength(2 * masters.length);

    const streams: { org: TestOrg; exp: StreamExpectation }[] = [];
    for (const [k, org] of orgs.entries()) {
      for (const [name, url] of [['A', a.url], ['B', b.url]] as const) {
        const stream = await openResilient({ urls: () => [url], headers: bearer(org.key), startAfter: 0, name: `org${k} (master ${masterOf.get(org.id)}) on ${name}` });
        streams.push({ org, exp: { stream } });
      }
    }

    const traffic = new Traffic({ orgs, urls: () => [a.url, b.url], batchSize: 5, pauseMs: 30 }).start();
    await traffic.waitForMoreSuccesses(60, 30_000);

    const victim = masterOf.get(orgs[0].id)!;
    const replica = (await cluster.topology()).find((n) => n.masterPort === victim)!.port;
    const before = { a: await reconnects(a), b: await reconnects(b) };
    await cluster.kill(victim);
    const killedAt = Date.now();
    // The cluster marks the master failed after cluster-node-timeout and elects its replica; traffic flows throughout.
    await Promise.all([cluster.waitForMaster(replica, 60_000), traffic.waitForMoreSuccesses(60, 60_000)]);
    const promotedAfterMs = Date.now() - killedAt;
    // Both instances signal that their shard subscribers are back (the stream hub then fills gaps from Postgres).
    await until('A resubscribed', async () => (await reconnects(a)) > before.a, 60_000);
    await until('B resubscribed', async () => (await reconnects(b)) > before.b, 60_000);
    await traffic.waitForMoreSuccesses(60, 30_000);
    await traffic.stop();

    expect(traffic.attempts().filter((x) => x.status !== 200), 'every ingest attempt succeeded, failover or not').toEqual([]);
    await checkTrafficStored(db.url, traffic);
    let stored = 0;
    for (const org of orgs) stored += (await checkOrg(db.url, org.id, streams.filter((s) => s.org === org).map((s) => s.exp))).stored;
    for (const { exp } of streams) {
      // Nobody was cut: the gap was filled on the same connection.
      expect(exp.stream.connections.length, exp.stream.opts.name).toBe(1);
      expect(exp.stream.current()!.end).toBeNull();
    }
    console.log(`redis cluster failover: ${traffic.requests.length} requests, ${stored} events stored; replica ${replica} served the slots ${promotedAfterMs} ms after master ${victim} was killed`);
    for (const { exp } of streams) await exp.stream.stop();
  });
});
