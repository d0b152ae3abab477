// The Bus interface: per-organization publish/subscribe of committed event batches between instances.
import type { PublishedBatch } from '../audit/audit-types.js';

export type BatchHandler = (batch: PublishedBatch) => void;

export interface Bus {
  readonly kind: 'redis' | 'memory';
  /** Publishes one committed batch to its org's channel. At most once: receivers fill gaps from the database. */
  publish(batch: PublishedBatch): Promise<void>;
  /**
   * Subscribes to an org's channel. `ready` resolves once the subscription is active. Reference-counted: the
   * channel is unsubscribed when the last handler of that org is removed by `unsubscribe`.
   */
  subscribe(orgId: string, handler: BatchHandler): Subscription;
  /** Called after the connection to the broker was lost and re-established (messages may have been missed). */
  onResubscribed(listener: () => void): void;
  /** Broadcast of small control messages to every instance (credential revocations). */
  publishControl(message: ControlMessage): Promise<void>;
  onControl(listener: (message: ControlMessage) => void): void;
  /** Waits (at most timeoutMs) for the broker connections; the service runs without them, degraded. */
  connected(timeoutMs: number): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type ControlMessage = { kind: 'revoke_key'; keyId: string } | { kind: 'end_login'; loginSessionId: string };

export interface Subscription {
  ready: Promise<void>;
  unsubscribe(): void;
}
