// The pub/sub link over a Redis Cluster: shard channels (SPUBLISH/SSUBSCRIBE), so a message goes only to the shard
// that owns its channel's slot (and that shard's replicas), never to every node as PUBLISH does in a cluster.
import type { Cluster } from 'ioredis';
import type { Logger } from 'pino';
import { createClusterClient, type RedisSeed } from '../shared/redis-target.js';
import type { MessageListener, PubSubLink } from './pubsub-link.js';
import { connectionName } from './redis-link.js';

export interface ClusterLinkOptions {
  seeds: RedisSeed[];
  /** REDIS_PREFIX: names the connections. */
  prefix: string;
  logger: Logger;
}

export function createClusterLink(opts: ClusterLinkOptions): PubSubLink {
  // Publishing fails fast while the cluster is unreachable (no offline queue): Postgres holds the events.
  const pub = createClusterClient(opts.seeds, { connectionName: connectionName(opts.prefix, 'pub'), maxRetriesPerRequest: 1, commandTimeout: 1000 }, { enableOfflineQueue: false });
  // One subscriber connection per master that owns a subscribed channel's slot (ioredis >= 5.10.1; without
  // shardedSubscribers, SSUBSCRIBE goes to one node and never completes for channels of another shard).
  const sub = createClusterClient(opts.seeds, { connectionName: connectionName(opts.prefix, 'sub') }, { shardedSubscribers: true });
  const channels = new Set<string>();
  const messageListeners: MessageListener[] = [];
  const resubscribedListeners: (() => void)[] = [];
  let readyOnce = false;
  let closing = false;

  for (const [name, client] of [['publisher', pub], ['subscriber', sub]] as const) {
    client.on('error', (err: Error) => opts.logger.warn({ err: { message: err.message } }, `redis cluster ${name} error`));
    client.on('node error', (err: Error) => opts.logger.warn({ err: { message: err.message } }, `redis cluster ${name} node error`));
  }
  sub.once('ready', () => (readyOnce = true));

  // ioredis rebuilds its shard subscribers when one ends (a master killed, a connection dropped) or the slots moved (a
  // failover, resharding), writes the SSUBSCRIBE of every channel on the new connections, then emits this. Messages of
  // the gap are lost: listeners read them from Postgres. (The SSUBSCRIBE is on the wire before their read starts; an
  // event in the sliver between the two shows as a gap at the org's next event, or the feeds' periodic catch-up.)
  sub.on('subscribersReady', () => {
    if (!readyOnce || closing || channels.size === 0) return;
    opts.logger.info('redis cluster shard subscribers re-established; filling gaps from the database');
    for (const l of resubscribedListeners) l();
  });

  sub.on('smessageBuffer', (channel: Buffer, message: Buffer) => {
    const name = channel.toString();
    for (const l of messageListeners) l(name, message);
  });

  const ready = (c: Cluster) => (c.status === 'ready' ? Promise.resolve() : new Promise<void>((r) => c.once('ready', () => r())));

  return {
    kind: 'redis-cluster',
    async publish(channel, message) {
      await pub.spublish(channel, message);
    },
    async subscribe(channel) {
      channels.add(channel);
      await sub.ssubscribe(channel);
    },
    async unsubscribe(channel) {
      channels.delete(channel);
      await sub.sunsubscribe(channel);
    },
    onMessage(listener) {
      messageListeners.push(listener);
    },
    onResubscribed(listener) {
      resubscribedListeners.push(listener);
    },
    async connected(timeoutMs) {
      await Promise.race([Promise.all([ready(pub), ready(sub)]), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    },
    async ping() {
      await pub.ping();
      if (sub.status !== 'ready') throw new Error(`redis cluster subscriber is ${sub.status}`);
    },
    async close() {
      closing = true;
      await Promise.allSettled([pub.quit(), sub.quit()]);
      pub.disconnect();
      sub.disconnect();
    },
  };
}
