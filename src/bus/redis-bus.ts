// Redis pub/sub Bus: one publisher and one subscriber connection per instance, a channel per organization.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { PublishedBatch } from '../audit/audit-types.js';
import type { BatchHandler, Bus, ControlMessage } from './bus.js';

export interface RedisBusOptions {
  url: string;
  prefix: string;
  logger: Logger;
  onReconnect?: () => void;
}

export function createRedisBus(opts: RedisBusOptions): Bus {
  const retryStrategy = (n: number) => Math.min(50 * 2 ** n, 1000);
  const name = (role: string) => `${opts.prefix}${role}`.replace(/[^A-Za-z0-9_:.-]/g, '_');
  // Publishing fails fast while Redis is away (no offline queue): Postgres already holds the events, receivers refill.
  const pub = new Redis(opts.url, { retryStrategy, connectionName: name('pub'), enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1000 });
  const sub = new Redis(opts.url, { retryStrategy, connectionName: name('sub'), maxRetriesPerRequest: null });
  const orgChannel = (orgId: string) => `${opts.prefix}org:${orgId}`;
  const controlChannel = `${opts.prefix}control`;
  const handlers = new Map<string, Set<BatchHandler>>();
  const subscribed = new Map<string, Promise<void>>();
  const resubscribedListeners: (() => void)[] = [];
  const controlListeners: ((m: ControlMessage) => void)[] = [];
  let readyOnce = false;
  let closing = false;

  for (const [name, conn] of [['publisher', pub], ['subscriber', sub]] as const) {
    conn.on('error', (err) => opts.logger.warn({ err: { message: err.message } }, `redis ${name} connection error`));
  }

  // ioredis re-subscribes every channel after reconnecting; messages sent while down are lost, so listeners refill from Postgres.
  sub.on('ready', () => {
    if (readyOnce && !closing) {
      // Confirm the subscriptions are active again before reading the database, so nothing falls between the two.
      const channels = [controlChannel, ...[...handlers.keys()].map(orgChannel)];
      sub
        .subscribe(...channels)
        .catch(() => undefined)
        .then(() => {
          opts.logger.info('redis subscriber reconnected; filling gaps from the database');
          opts.onReconnect?.();
          for (const l of resubscribedListeners) l();
        });
    }
    readyOnce = true;
  });

  sub.on('messageBuffer', (channelBuf: Buffer, messageBuf: Buffer) => {
    const channel = channelBuf.toString();
    if (channel === controlChannel) {
      let m: ControlMessage;
      try {
        m = JSON.parse(messageBuf.toString()) as ControlMessage;
      } catch {
        return;
      }
      for (const l of controlListeners) l(m);
      return;
    }
    const orgId = channel.slice(opts.prefix.length + 4);
    const set = handlers.get(orgId);
    if (!set || set.size === 0) return;
    let batch: PublishedBatch;
    try {
      batch = JSON.parse(messageBuf.toString()) as PublishedBatch;
    } catch (err) {
      opts.logger.error({ err }, 'unparseable bus message');
      return;
    }
    for (const h of set) h(batch);
  });

  const controlSubscribed = sub.subscribe(controlChannel).catch((err) => opts.logger.warn({ err: { message: err.message } }, 'control channel subscribe failed'));

  return {
    kind: 'redis',
    async publish(batch) {
      try {
        await pub.publish(orgChannel(batch.orgId), JSON.stringify(batch));
      } catch (err) {
        // This instance's own clients still get the batch at once; other instances catch up from the database.
        for (const h of handlers.get(batch.orgId) ?? []) h(batch);
        throw err;
      }
    },
    subscribe(orgId, handler) {
      let set = handlers.get(orgId);
      if (!set) handlers.set(orgId, (set = new Set()));
      set.add(handler);
      let ready = subscribed.get(orgId);
      if (!ready) {
        ready = sub.subscribe(orgChannel(orgId)).then(() => undefined);
        ready.catch(() => undefined);
        subscribed.set(orgId, ready);
      }
      return {
        ready,
        unsubscribe() {
          if (!set.delete(handler) || set.size > 0) return;
          handlers.delete(orgId);
          subscribed.delete(orgId);
          sub.unsubscribe(orgChannel(orgId)).catch(() => undefined);
        },
      };
    },
    onResubscribed(listener) {
      resubscribedListeners.push(listener);
    },
    async publishControl(message) {
      await pub.publish(controlChannel, JSON.stringify(message));
    },
    onControl(listener) {
      controlListeners.push(listener);
    },
    async connected(timeoutMs) {
      const ready = (c: Redis) => (c.status === 'ready' ? Promise.resolve() : new Promise<void>((r) => c.once('ready', () => r())));
      await Promise.race([Promise.all([ready(pub), ready(sub)]), new Promise((r) => setTimeout(r, timeoutMs).unref())]);
    },
    async ping() {
      await Promise.all([pub.ping(), controlSubscribed]);
      if (sub.status !== 'ready') throw new Error(`redis subscriber is ${sub.status}`);
    },
    async close() {
      closing = true;
      handlers.clear();
      await Promise.allSettled([pub.quit(), sub.quit()]);
      pub.disconnect();
      sub.disconnect();
    },
  };
}
