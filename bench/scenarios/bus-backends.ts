// Bus backends scenario: the cross-instance and fan-out cases on a private Redis and on a private Redis Cluster (three
// masters, one replica each; sharded pub/sub), in turn in the same run (Redis, cluster, cluster, Redis), with what each
// event costs the broker (commands, bytes, replication, CPU) and the service's CPU per delivery.
import { Cluster, Redis } from 'ioredis';
import { clusterChannelNames, standaloneChannelNames } from '../../src/bus/channel-names.js';
import type { RunContext } from '../lib/context.js';
import { cpuSeconds } from '../lib/cpu.js';
import { createDatabase, createOrg, serviceEnv, type BenchDatabase } from '../lib/provision.js';
import { brokerCounters, counterDelta, type RedisCounters } from '../lib/redis-stats.js';
import { startServer } from '../lib/service.js';
import { runStreamCase, type LatencySummary, type StreamCaseResult } from '../lib/stream-case.js';
// The private brokers are the test suite's: one redis-server, or a cluster made by redis-cli --cluster create.
import { startPrivateRedis } from '../../test/helpers/private-redis.js';
import { startPrivateRedisCluster } from '../../test/helpers/private-redis-cluster.js';
import { seqLookup } from './cross-instance.js';

export type BusBackend = 'redis' | 'redis-cluster';
const ORDER: BusBackend[] = ['redis', 'redis-cluster', 'redis-cluster', 'redis'];

const CROSS = { clientsPerInstance: 200, rate: 500, batch: 10, durationMs: 10_000 };
const FANOUT = { clients: 1000, batch: 100, durationMs: 10_000, inFlight: 4 };

export interface BrokerCostPerEvent {
  /** PUBLISH or SPUBLISH calls per event: one per committed batch (group commit can put several requests in one). */
  publishes: number;
  /** Bytes of the published messages per event (the batch's JSON), as a subscriber of the scenario's own received them. */
  messageBytes: number;
  /** Every command Redis ran, per event, the commands inside the anomaly counters' Lua scripts included. */
  commands: number;
  /** Bytes Redis read from and wrote to its clients, per event. */
  bytesIn: number;
  bytesOut: number;
  /** Bytes masters sent their replicas, per event. */
  replicationBytes: number;
  /** CPU of every redis-server of the broker, per event. */
  cpuMicroseconds: number;
  /** Redis's time per publish (its writes to the subscribers' buffers included), and per call of the counters' scripts. */
  usecPerPublish: number;
  usecPerScript: number;
  /** Counter script calls (EVALSHA) per event. */
  scriptsPerEvent: number;
}

export interface BusCrossInstanceCase {
  eventsPerSecond: number;
  other: LatencySummary;
  same: LatencySummary;
  deliveries: number;
  /** Both service processes' CPU from the first publish until every client had the last event (A's ingest included). */
  serviceCpuSeconds: number;
  deliveriesPerCpuSecond: number;
  /** Events per published batch (group commit merges requests that wait), and service CPU per batch written to a stream. */
  eventsPerBatch: number;
  cpuMicrosecondsPerWrite: number;
  broker: BrokerCostPerEvent;
}

export interface BusFanoutCase {
  eventsPerSecond: number;
  deliveriesPerSecond: number;
  latency: LatencySummary;
  /** The service process's CPU from the first publish until every client had the last event (its ingest included). */
  serviceCpuSeconds: number;
  deliveriesPerCpuSecond: number;
  eventsPerBatch: number;
  cpuMicrosecondsPerWrite: number;
  broker: BrokerCostPerEvent;
}

export interface BusRound {
  backend: BusBackend;
  /** Redis nodes of the broker (1, or 3 masters + 3 replicas). */
  nodes: number;
  crossInstance: BusCrossInstanceCase;
  fanout: BusFanoutCase;
}

export interface BusBackendsResult {
  cross: typeof CROSS;
  fanout: typeof FANOUT;
  rounds: BusRound[];
}

type EnvOf = (db: BenchDatabase) => Record<string, string>;

interface Broker {
  backend: BusBackend;
  env: Record<string, string>;
  ports: number[];
  /** A subscriber of an org's channel that counts the bytes of the messages it gets. */
  probe(prefix: string, orgId: string): Promise<{ bytes(): number; close(): void }>;
  stop(): Promise<void>;
}

async function startBroker(backend: BusBackend): Promise<Broker> {
  if (backend === 'redis') {
    const r = await startPrivateRedis();
    return {
      backend,
      env: { REDIS_URL: r.url },
      ports: [r.port],
      async probe(prefix, orgId) {
        const sub = new Redis(r.url);
        let bytes = 0;
        sub.on('messageBuffer', (_c: Buffer, m: Buffer) => (bytes += m.length));
        await sub.subscribe(standaloneChannelNames(prefix).org(orgId));
        return { bytes: () => bytes, close: () => sub.disconnect() };
      },
      stop: () => r.stop(),
    };
  }
  const c = await startPrivateRedisCluster();
  return {
    backend,
    env: { REDIS_CLUSTER_NODES: c.seeds },
    ports: c.ports,
    async probe(prefix, orgId) {
      const sub = new Cluster(c.ports.map((port) => ({ host: '127.0.0.1', port })), { shardedSubscribers: true });
      let bytes = 0;
      sub.on('smessageBuffer', (_c: Buffer, m: Buffer) => (bytes += m.length));
      await sub.ssubscribe(clusterChannelNames(prefix).org(orgId));
      return { bytes: () => bytes, close: () => sub.disconnect() };
    },
    stop: () => c.stop(),
  };
}

/** Per event; the probe subscriber's own share of the bytes Redis sent is taken out. */
function perEvent(d: RedisCounters, events: number, messageBytes: number): BrokerCostPerEvent {
  const commands = Object.values(d.calls).reduce((a, b) => a + b, 0);
  return {
    publishes: ((d.calls.publish ?? 0) + (d.calls.spublish ?? 0)) / events,
    messageBytes: messageBytes / events,
    commands: commands / events,
    bytesIn: d.netIn / events,
    bytesOut: (d.netOut - messageBytes) / events,
    replicationBytes: d.replOut / events,
    cpuMicroseconds: (d.cpu * 1e6) / events,
    usecPerPublish: ((d.usec.publish ?? 0) + (d.usec.spublish ?? 0)) / Math.max(1, (d.calls.publish ?? 0) + (d.calls.spublish ?? 0)),
    usecPerScript: ((d.usec.evalsha ?? 0) + (d.usec.eval ?? 0)) / Math.max(1, (d.calls.evalsha ?? 0) + (d.calls.eval ?? 0)),
    scriptsPerEvent: ((d.calls.evalsha ?? 0) + (d.calls.eval ?? 0)) / events,
  };
}

/** Broker counters and the org's message bytes from the first publish until every client had the last event. */
async function brokerMeter(broker: Broker, prefix: string, orgId: string) {
  let before: RedisCounters | null = null;
  let delta: RedisCounters | null = null;
  const probe = await broker.probe(prefix, orgId);
  let bytes0 = 0;
  let bytes = 0;
  return {
    async start() {
      before = await brokerCounters(broker.ports);
      bytes0 = probe.bytes();
    },
    async stop() {
      delta = counterDelta(before!, await brokerCounters(broker.ports));
      bytes = probe.bytes() - bytes0;
      probe.close();
    },
    cost: (events: number) => perEvent(delta!, events, bytes),
  };
}

async function crossInstanceCase(ctx: RunContext, envOf: EnvOf, broker: Broker, n: number): Promise<BusCrossInstanceCase> {
  const db = await createDatabase();
  const env = envOf(db);
  try {
    const a = await startServer(`bus-${n}-a`, ctx.entry.args, env);
    try {
      const b = await startServer(`bus-${n}-b`, ctx.entry.args, { ...env, MIGRATE_ON_START: 'false' });
      try {
        const org = await createOrg(a.url, ctx.adminToken, `bus backends ${n}`);
        const meter = await brokerMeter(broker, env.REDIS_PREFIX, org.id);
        let cpu0 = 0;
        let cpu = 0;
        const serviceCpu = () => cpuSeconds(a.pid) + cpuSeconds(b.pid);
        const r: StreamCaseResult = await runStreamCase({
          publishUrl: a.url,
          key: org.key,
          tag: 'bx',
          groups: [
            { name: 'other', url: b.url, count: CROSS.clientsPerInstance },
            { name: 'same', url: a.url, count: CROSS.clientsPerInstance },
          ],
          publisher: { mode: 'paced', rate: CROSS.rate, batchSize: CROSS.batch, durationMs: CROSS.durationMs, concurrency: 1 },
          log: ctx.log,
          seqsOf: seqLookup(db, org.id, 'bx', CROSS.batch),
          measure: {
            async start() {
              await meter.start();
              cpu0 = serviceCpu();
            },
            async stop() {
              cpu = serviceCpu() - cpu0;
              await meter.stop();
            },
          },
        });
        const deliveries = r.groups.other.deliveries + r.groups.same.deliveries;
        const cost = meter.cost(r.eventsPublished);
        // Each published batch is one write to each of the streams.
        const writes = cost.publishes * r.eventsPublished * 2 * CROSS.clientsPerInstance;
        return {
          eventsPerSecond: r.eventsPerSecond,
          other: r.groups.other.latencyAfterResponseMs,
          same: r.groups.same.latencyAfterResponseMs,
          deliveries,
          serviceCpuSeconds: cpu,
          deliveriesPerCpuSecond: deliveries / cpu,
          eventsPerBatch: 1 / cost.publishes,
          cpuMicrosecondsPerWrite: (cpu * 1e6) / writes,
          broker: cost,
        };
      } finally {
        await b.stop();
      }
    } finally {
      await a.stop();
    }
  } finally {
    await db.drop();
  }
}

async function fanoutCase(ctx: RunContext, envOf: EnvOf, broker: Broker, n: number): Promise<BusFanoutCase> {
  const db = await createDatabase();
  const env = envOf(db);
  try {
    const svc = await startServer(`bus-${n}-fanout`, ctx.entry.args, env);
    try {
      const org = await createOrg(svc.url, ctx.adminToken, `bus fan-out ${n}`);
      const meter = await brokerMeter(broker, env.REDIS_PREFIX, org.id);
      let cpu0 = 0;
      let cpu = 0;
      const r = await runStreamCase({
        publishUrl: svc.url,
        key: org.key,
        tag: 'bf',
        groups: [{ name: 'service', url: svc.url, count: FANOUT.clients }],
        publisher: { mode: 'max', batchSize: FANOUT.batch, durationMs: FANOUT.durationMs, concurrency: FANOUT.inFlight },
        log: ctx.log,
        seqsOf: seqLookup(db, org.id, 'bf', FANOUT.batch),
        measure: {
          async start() {
            await meter.start();
            cpu0 = cpuSeconds(svc.pid);
          },
          async stop() {
            cpu = cpuSeconds(svc.pid) - cpu0;
            await meter.stop();
          },
        },
      });
      const g = r.groups.service;
      const cost = meter.cost(r.eventsPublished);
      const writes = cost.publishes * r.eventsPublished * FANOUT.clients;
      return {
        eventsPerSecond: r.eventsPerSecond,
        deliveriesPerSecond: g.deliveriesPerSecond,
        latency: g.latencyAfterResponseMs,
        serviceCpuSeconds: cpu,
        deliveriesPerCpuSecond: g.deliveries / cpu,
        eventsPerBatch: 1 / cost.publishes,
        cpuMicrosecondsPerWrite: (cpu * 1e6) / writes,
        broker: cost,
      };
    } finally {
      await svc.stop();
    }
  } finally {
    await db.drop();
  }
}

export async function runBusBackends(ctx: RunContext): Promise<BusBackendsResult> {
  const rounds: BusRound[] = [];
  for (const [n, backend] of ORDER.entries()) {
    ctx.log(`  round ${n + 1} of ${ORDER.length}: ${backend === 'redis' ? 'one Redis' : 'Redis Cluster, 3 masters + 3 replicas'}`);
    const broker = await startBroker(backend);
    try {
      // The service's usual bench settings, on this round's broker (REDIS_URL and REDIS_CLUSTER_NODES exclude each other).
      const envOf: EnvOf = (db) => {
        const env: Record<string, string> = { ...serviceEnv(db, `${ctx.redisPrefix}bus${n}:`, ctx.adminToken), ...broker.env };
        if (backend === 'redis-cluster') delete env.REDIS_URL;
        return env;
      };
      ctx.log('    cross-instance');
      const crossInstance = await crossInstanceCase(ctx, envOf, broker, n);
      ctx.log('    fan-out');
      const fanout = await fanoutCase(ctx, envOf, broker, n);
      rounds.push({ backend, nodes: broker.ports.length, crossInstance, fanout });
    } finally {
      await broker.stop();
    }
  }
  return { cross: CROSS, fanout: FANOUT, rounds };
}
