// The pub/sub primitives a broker gives the data transport and the control channel: what one Redis (PUBLISH/SUBSCRIBE)
// and a Redis Cluster (SPUBLISH/SSUBSCRIBE, shard channels) differ in. One link per instance carries both.
export type MessageListener = (channel: string, message: Buffer) => void;

export interface PubSubLink {
  readonly kind: 'redis' | 'redis-cluster';
  /** Sends a message on a channel. At most once: a message sent while a subscriber is away is not kept for it. */
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the broker confirmed the subscription; the link re-establishes it after every reconnection. */
  subscribe(channel: string): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  onMessage(listener: MessageListener): void;
  /**
   * Called after subscriptions were lost (a connection dropped, a shard failed over, slots moved) and are active again:
   * messages of the gap are lost, so a listener reads what it missed from where it is kept (Postgres for events).
   */
  onResubscribed(listener: () => void): void;
  /** Waits (at most timeoutMs) for the broker connections; the service runs without them, degraded. */
  connected(timeoutMs: number): Promise<void>;
  /** Rejects unless the broker answers and the subscriber side is connected. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
