// Chooses the bus from config (one Redis, a Redis Cluster, or in process) and pairs its data transport and control
// channel, which share the instance's broker connections.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { redisTarget } from '../shared/redis-target.js';
import { clusterChannelNames, standaloneChannelNames } from './channel-names.js';
import { createClusterLink } from './cluster-link.js';
import { createLinkControlChannel, createMemoryControlChannel, type ControlChannel } from './control-channel.js';
import { createLinkTransport, createMemoryTransport, type DataTransport } from './data-transport.js';
import { createRedisLink } from './redis-link.js';

export interface Bus {
  readonly kind: 'memory' | 'redis' | 'redis-cluster';
  /** Committed event batches, one channel per organization. */
  transport: DataTransport;
  /** Small broadcast messages to every instance. */
  control: ControlChannel;
  /** Waits (at most timeoutMs) for the broker connections; the service runs without them, degraded. */
  connected(timeoutMs: number): Promise<void>;
  /** Rejects unless the broker answers and the subscriptions are in place (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function createBus(config: Pick<Config, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_PREFIX'>, logger: Logger): Bus {
  const target = redisTarget(config);
  if (!target) {
    return { kind: 'memory', transport: createMemoryTransport(), control: createMemoryControlChannel(), async connected() {}, async ping() {}, async close() {} };
  }
  const prefix = config.REDIS_PREFIX;
  const link = target.mode === 'cluster' ? createClusterLink({ seeds: target.seeds, prefix, logger }) : createRedisLink({ url: target.url, prefix, logger });
  const names = target.mode === 'cluster' ? clusterChannelNames(prefix) : standaloneChannelNames(prefix);
  const control = createLinkControlChannel(link, names.control, logger);
  return {
    kind: link.kind,
    transport: createLinkTransport(link, names, logger),
    control,
    connected: (timeoutMs) => link.connected(timeoutMs),
    async ping() {
      await Promise.all([link.ping(), control.subscribed]);
    },
    close: () => link.close(),
  };
}
