// Which Redis the service talks to (one node from REDIS_URL, a cluster from REDIS_CLUSTER_NODES, or none) and the
// ioredis client for it, so every Redis user (bus, anomaly counters) connects the same way.
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';

/** One seed of REDIS_CLUSTER_NODES. Credentials and TLS, when a seed URL gives them, apply to every node. */
export interface RedisSeed {
  host: string;
  port: number;
  username?: string;
  password?: string;
  tls: boolean;
}

export type RedisTarget = { mode: 'standalone'; url: string } | { mode: 'cluster'; seeds: RedisSeed[] };

/**
 * Parses REDIS_CLUSTER_NODES: comma-separated `host:port` or `redis://[user:password@]host:port` (`rediss://` for TLS).
 * Seeds that carry credentials or TLS must agree: a cluster has one set. Throws a message naming the bad seed's position.
 */
export function parseClusterSeeds(text: string): RedisSeed[] {
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const seeds = parts.map((part, i) => {
    const isUrl = /^rediss?:\/\//.test(part);
    const url = safeUrl(isUrl ? part : `redis://${part}`);
    // host:port needs its port; a URL defaults to 6379 as redis-cli does.
    const port = url?.port ? Number(url.port) : isUrl ? 6379 : NaN;
    if (!url || !url.hostname || !Number.isInteger(port) || (url.pathname !== '' && url.pathname !== '/') || url.search || url.hash) {
      throw new Error(`seed ${i + 1} is not host:port or redis[s]://[user:password@]host:port`);
    }
    const seed: RedisSeed = { host: url.hostname.replace(/^\[|\]$/g, ''), port, tls: url.protocol === 'rediss:' };
    if (url.username) seed.username = decodeURIComponent(url.username);
    if (url.password) seed.password = decodeURIComponent(url.password);
    return seed;
  });
  const withAuth = seeds.filter((s, i) => /^rediss?:\/\//.test(parts[i]));
  const first = withAuth[0];
  if (first && withAuth.some((s) => s.username !== first.username || s.password !== first.password || s.tls !== first.tls)) {
    throw new Error('seed URLs disagree on credentials or TLS (a cluster has one set)');
  }
  return seeds.map((s) => ({ ...s, username: first?.username, password: first?.password, tls: first?.tls ?? false }));
}

function safeUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

export function redisTarget(config: { REDIS_URL?: string; REDIS_CLUSTER_NODES: RedisSeed[] }): RedisTarget | null {
  if (config.REDIS_CLUSTER_NODES.length) return { mode: 'cluster', seeds: config.REDIS_CLUSTER_NODES };
  if (config.REDIS_URL) return { mode: 'standalone', url: config.REDIS_URL };
  return null;
}

/** Options of every node connection of a cluster client: the seeds' credentials and TLS, then the caller's. */
export function clusterNodeOptions(seeds: RedisSeed[], options: RedisOptions): RedisOptions {
  const [s] = seeds;
  return { ...(s?.username ? { username: s.username } : {}), ...(s?.password ? { password: s.password } : {}), ...(s?.tls ? { tls: {} } : {}), ...options };
}

/** A cluster client on the seeds; `node` applies to each node's connection, `cluster` to the client. */
export function createClusterClient(seeds: RedisSeed[], node: RedisOptions, cluster: Omit<ClusterOptions, 'redisOptions'> = {}): Cluster {
  return new Cluster(
    seeds.map((s) => ({ host: s.host, port: s.port })),
    { ...cluster, redisOptions: clusterNodeOptions(seeds, node) },
  );
}

/** A client of the target: one connection for a single node; a cluster client (slot routing, MOVED, failover) otherwise. */
export function createRedisClient(target: RedisTarget, node: RedisOptions, cluster: Omit<ClusterOptions, 'redisOptions'> = {}): Redis | Cluster {
  return target.mode === 'cluster' ? createClusterClient(target.seeds, node, cluster) : new Redis(target.url, node);
}
