// The pub/sub link over one Redis (PUBLISH/SUBSCRIBE): a publisher and a subscriber connection per instance.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { MessageListener, PubSubLink } from './pubsub-link.js';

export interface RedisLinkOptions {
  url: string;
  /** REDIS_PREFIX: names the connections (CLIENT LIST shows whose they are). */
  prefix: string;
  logger: Logger;
}

export const connectionName = (prefix: string, role: string) => `${prefix}${role}`.replace(/[^A-Za-z0-9_:.-]/g, '_');

export function createRedisLink(opts: RedisLinkOptions): PubSubLink {
  const retryStrategy = (n: number) => Math.min(50 * 2 ** n, 1000);
  // Publishing fails fast while Redis is away (no offline queue): Postgres already holds the events, receivers refill.
  const pub = new Redis(opts.url, { retryStrategy, connectionName: connectionName(opts.prefix, 'pub'), enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000 });
  const sub = new Redis(opts.url, { retryStrategy, connectionName: connectionName(opts.prefix, 'sub'), maxRetriesPerRequest: null });
  const channels = new Set<string>();
  const messageListeners: MessageListener[] = [];
  const resubscribedListeners: (() => void)[] = [];
  let readyOnce = false;
  let closing = false;

  for (const [name, conn] of [['publisher', pub], ['subscriber', sub]] as const) {
    conn.on('error', (err) => opts.logger.warn({ err: { message: err.message } }, `redis ${name} connection error`));
  }

  // ioredis re-subscribes every channel after reconnecting; messages sent while down are lost, so listeners refill.
  sub.on('ready', () => {
    if (readyOnce && !closing) {
      // Confirm the subscriptions are active again before anyone reads the database, so nothing falls between the two.
      const all = [...channels];
      (all.length ? sub.subscribe(...all) : Promise.resolve())
        .catch(() => undefined)
        .then(() => {
          opts.logger.info('redis subscriber reconnected; filling gaps from the database');
          for (const l of resubscribedListeners) l();
        });
    }
    readyOnce = true;
  });

  sub.on('messageBuffer', (channel: Buffer, message: Buffer) => {
    const name = channel.toString();
    for (const l of messageListeners) l(name, message);
  });

  return {
    kind: 'redis',
    async publish(channel, message) {
      await pub.publish(channel, message);
    },
    async subscribe(channel) {
      channels.add(channel);
      await sub.subscribe(channel);
    },
    async unsubscribe(channel) {
      channels.delete(channel);
      await sub.unsubscribe(channel);
    },
    onMessage(listener) {
      messageListeners.push(listener);
    },
    onResubscribed(listener) {
      resubscribedListeners.push(listener);
    },
    async connected(timeoutMs) {
      const ready = (c: Redis) => (c.status === 'ready' ? Promise.resolve() : new Promise<void>((r) => c.once('ready', () => r())));
      await Promise.race([Promise.all([ready(pub), ready(sub)]), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    },
    async ping() {
      await pub.ping();
      if (sub.status !== 'ready') throw new Error(`redis subscriber is ${sub.status}`);
    },
    async close() {
      closing = true;
      await Promise.allSettled([pub.quit(), sub.quit()]);
      pub.disconnect();
      sub.disconnect();
    },
  };
}
