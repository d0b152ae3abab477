// The data transport: per-organization publish/subscribe of committed event batches between instances, over a
// pub/sub link (one channel per organization) or in process.
import type { Logger } from 'pino';
import type { PublishedBatch } from '../audit/audit-types.js';
import type { ChannelNames } from './channel-names.js';
import type { PubSubLink } from './pubsub-link.js';

export type BatchHandler = (batch: PublishedBatch) => void;

export interface Subscription {
  /** Resolves once the subscription is active (rejects if the broker refused or is away). */
  ready: Promise<void>;
  unsubscribe(): void;
}

export interface DataTransport {
  /** Publishes one committed batch to its org's channel. At most once: receivers fill gaps from the database. */
  publish(batch: PublishedBatch): Promise<void>;
  /**
   * Subscribes to an org's channel. Reference-counted: the channel is unsubscribed when the last handler of that org
   * is removed by `unsubscribe`.
   */
  subscribe(orgId: string, handler: BatchHandler): Subscription;
  /** Called after the subscriptions were lost and are active again (batches may have been missed meanwhile). */
  onResubscribed(listener: () => void): void;
}

/** The data transport over a broker link: batches are JSON on the org's channel. */
export function createLinkTransport(link: PubSubLink, names: ChannelNames, logger: Logger): DataTransport {
  const handlers = new Map<string, Set<BatchHandler>>();
  const subscribed = new Map<string, Promise<void>>();
  const orgOfChannel = new Map<string, string>();

  link.onMessage((channel, message) => {
    const orgId = orgOfChannel.get(channel);
    const set = orgId === undefined ? undefined : handlers.get(orgId);
    if (!set || set.size === 0) return;
    let batch: PublishedBatch;
    try {
      batch = JSON.parse(message.toString()) as PublishedBatch;
    } catch (err) {
      logger.error({ err: { message: (err as Error).message }, channel }, 'unparseable bus message');
      return;
    }
    for (const h of set) h(batch);
  });

  return {
    async publish(batch) {
      try {
        await link.publish(names.org(batch.orgId), JSON.stringify(batch));
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
        const channel = names.org(orgId);
        orgOfChannel.set(channel, orgId);
        ready = link.subscribe(channel);
        ready.catch(() => undefined);
        subscribed.set(orgId, ready);
      }
      return {
        ready,
        unsubscribe() {
          if (!set.delete(handler) || set.size > 0) return;
          handlers.delete(orgId);
          subscribed.delete(orgId);
          const channel = names.org(orgId);
          orgOfChannel.delete(channel);
          link.unsubscribe(channel).catch(() => undefined);
        },
      };
    },
    onResubscribed(listener) {
      link.onResubscribed(listener);
    },
  };
}

/** The data transport in process, for the embedded single-instance mode: delivery is a function call. */
export function createMemoryTransport(): DataTransport {
  const handlers = new Map<string, Set<BatchHandler>>();
  return {
    async publish(batch) {
      for (const h of handlers.get(batch.orgId) ?? []) h(batch);
    },
    subscribe(orgId, handler) {
      let set = handlers.get(orgId);
      if (!set) handlers.set(orgId, (set = new Set()));
      set.add(handler);
      return {
        ready: Promise.resolve(),
        unsubscribe() {
          set.delete(handler);
          if (set.size === 0 && handlers.get(orgId) === set) handlers.delete(orgId);
        },
      };
    },
    onResubscribed() {},
  };
}
