// A private Redis Cluster (redis-server processes on spare ports, made with redis-cli --cluster create) that a test may
// break (SIGKILL a master, promote its replica) without touching the shared Redis; per-node stats for routing checks.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';

const run = promisify(execFile);

export interface ClusterNode {
  port: number;
  /** The node id CLUSTER NODES reports. */
  id: string;
  role: 'master' | 'replica';
  /** For a replica: the port of its master. */
  masterPort: number | null;
  /** Slot ranges a master serves. */
  slots: [number, number][];
}

export interface PrivateRedisCluster {
  /** Comma-separated host:port seeds, the REDIS_CLUSTER_NODES form. */
  seeds: string;
  ports: number[];
  /** The current topology, as the node at `askPort` (default: any live node) sees it. */
  topology(): Promise<ClusterNode[]>;
  /** The master that serves `key`'s slot now. */
  masterOf(key: string): Promise<ClusterNode>;
  /** CLUSTER KEYSLOT of a key or channel name. */
  slotOf(key: string): Promise<number>;
  /** SIGKILLs one node's process (nothing is flushed: its pub/sub messages in flight are lost). */
  kill(port: number): Promise<void>;
  /** Makes a replica take over its master's slots at once (CLUSTER FAILOVER TAKEOVER), for a master that is gone. */
  takeOver(replicaPort: number): Promise<void>;
  /** Resolves once every live node agrees that `port` is the master of the slots and the cluster state is ok. */
  waitForMaster(port: number, timeoutMs?: number): Promise<void>;
  /** A field of INFO commandstats of one node, e.g. calls of `spublish`; 0 when the command never ran there. */
  commandCalls(port: number, command: string): Promise<number>;
  /** PUBSUB SHARDNUMSUB of channels on one node: subscribers each channel has there. */
  shardNumSub(port: number, channels: string[]): Promise<Map<string, number>>;
  /** Kills every node and removes the cluster's files. */
  stop(): Promise<void>;
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** A random port in 20000-50000 whose cluster bus port (+10000) is free too. */
async function spareClusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 30000);
    if (taken.has(port) || taken.has(port + 10000) || taken.has(port - 10000)) continue;
    if ((await portIsFree(port)) && (await portIsFree(port + 10000))) {
      taken.add(port);
      return port;
    }
  }
}

function client(port: number): Redis {
  const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 1000 });
  c.on('error', () => undefined);
  return c;
}

async function ask<T>(port: number, fn: (c: Redis) => Promise<T>): Promise<T> {
  const c = client(port);
  try {
    await c.connect();
    return await fn(c);
  } finally {
    c.disconnect();
  }
}

/** Polls `check` until it holds: a cluster's gossip has no event an outside client could wait on. */
async function poll(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`redis cluster: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function parseNodes(text: string, portOf: (addr: string) => number): ClusterNode[] {
  const byId = new Map<string, { port: number; flags: string[]; masterId: string; slots: [number, number][]; id: string }>();
  for (const line of text.trim().split('\n')) {
    const [id, addr, flags, masterId, , , , , ...slotParts] = line.split(' ');
    if (flags.includes('fail') || flags.includes('noaddr') || flags.includes('handshake')) continue;
    const slots: [number, number][] = slotParts
      .filter((s) => !s.startsWith('['))
      .map((s) => {
        const [a, b] = s.split('-').map(Number);
        return [a, b ?? a];
      });
    byId.set(id, { id, port: portOf(addr), flags: flags.split(','), masterId, slots });
  }
  return [...byId.values()].map((n) => ({
    port: n.port,
    id: n.id,
    role: n.flags.includes('master') ? 'master' : 'replica',
    masterPort: n.masterId !== '-' ? (byId.get(n.masterId)?.port ?? null) : null,
    slots: n.slots,
  }));
}

export interface ClusterOptions {
  masters?: number;
  replicasPerMaster?: number;
  /** cluster-node-timeout: how long a silent master takes to be marked failed (and its replica to take over). */
  nodeTimeoutMs?: number;
}

export async function startPrivateRedisCluster(opts: ClusterOptions = {}): Promise<PrivateRedisCluster> {
  const masters = opts.masters ?? 3;
  const replicas = opts.replicasPerMaster ?? 1;
  const dir = await mkdtemp(path.join(tmpdir(), 'audit-stream-redis-cluster-'));
  const taken = new Set<number>();
  const ports: number[] = [];
  for (let i = 0; i < masters * (1 + replicas); i++) ports.push(await spareClusterPort(taken));
  const procs = new Map<number, ChildProcess>();
  const dead = new Set<number>();

  const stop = async () => {
    await Promise.all(
      [...procs.values()].map(async (p) => {
        if (p.exitCode !== null || p.signalCode !== null) return;
        const exited = new Promise((r) => p.once('exit', r));
        p.kill('SIGKILL');
        await exited;
      }),
    );
    await rm(dir, { recursive: true, force: true });
  };

  try {
    for (const port of ports) {
      const p = spawn(
        'redis-server',
        [
          '--port', String(port),
          '--bind', '127.0.0.1',
          '--cluster-enabled', 'yes',
          '--cluster-config-file', path.join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout', String(opts.nodeTimeoutMs ?? 2000),
          '--dir', dir,
          '--save', '',
          '--appendonly', 'no',
        ],
        { stdio: 'ignore' },
      );
      procs.set(port, p);
    }
    for (const port of ports) await poll(`node ${port} to answer`, () => ask(port, async (c) => (await c.ping()) === 'PONG'), 15_000);
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 60_000 });
    // Every node must know every other one, see all slots served and, for replicas, be linked to their master.
    await poll(
      'the cluster to settle',
      async () => {
        for (const port of ports) {
          const ok = await ask(port, async (c) => {
            const info = (await c.cluster('INFO')) as string;
            if (!/cluster_state:ok/.test(info) || !new RegExp(`cluster_known_nodes:${ports.length}\\b`).test(info)) return false;
            const role = (await c.role()) as unknown[];
            return role[0] === 'master' || role[3] === 'connected';
          });
          if (!ok) return false;
        }
        return true;
      },
      60_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }

  const live = () => ports.filter((p) => !dead.has(p));
  const portOf = (addr: string) => Number(addr.split('@')[0].split(':').pop());
  const topologyFrom = (port: number) => ask(port, async (c) => parseNodes((await c.cluster('NODES')) as string, portOf));
  const topology = async () => topologyFrom(live()[0]);
  const slotOf = (key: string) => ask(live()[0], async (c) => Number(await c.cluster('KEYSLOT', key)));

  return {
    seeds: ports.map((p) => `127.0.0.1:${p}`).join(','),
    ports,
    topology,
    slotOf,
    async masterOf(key) {
      const slot = await slotOf(key);
      const node = (await topology()).find((n) => n.role === 'master' && n.slots.some(([a, b]) => slot >= a && slot <= b));
      if (!node) throw new Error(`no master serves slot ${slot}`);
      return node;
    },
    async kill(port) {
      const p = procs.get(port)!;
      dead.add(port);
      if (p.exitCode !== null || p.signalCode !== null) return;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGKILL');
      await exited;
    },
    async takeOver(replicaPort) {
      await ask(replicaPort, (c) => c.cluster('FAILOVER', 'TAKEOVER'));
    },
    async waitForMaster(port, timeoutMs = 30_000) {
      await poll(
        `node ${port} to be master everywhere`,
        async () => {
          for (const p of live()) {
            const ok = await ask(p, async (c) => {
              if (!/cluster_state:ok/.test((await c.cluster('INFO')) as string)) return false;
              const me = parseNodes((await c.cluster('NODES')) as string, portOf).find((n) => n.port === port);
              return me?.role === 'master' && me.slots.length > 0;
            });
            if (!ok) return false;
          }
          return true;
        },
        timeoutMs,
      );
    },
    async commandCalls(port, command) {
      const info = await ask(port, (c) => c.info('commandstats'));
      const m = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info);
      return m ? Number(m[1]) : 0;
    },
    async shardNumSub(port, channels) {
      const reply = (await ask(port, (c) => c.call('PUBSUB', 'SHARDNUMSUB', ...channels))) as (string | number)[];
      const out = new Map<string, number>();
      for (let i = 0; i + 1 < reply.length; i += 2) out.set(String(reply[i]), Number(reply[i + 1]));
      return out;
    },
    stop,
  };
}
