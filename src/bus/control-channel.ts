// The control channel: small messages broadcast to every instance (key revocations, ended logins, ...), over one
// channel of the pub/sub link or in process.
import type { Logger } from 'pino';
import { parseControlMessage, type ControlKind, type ControlMessage, type ControlMessageOf } from './control-messages.js';
import type { PubSubLink } from './pubsub-link.js';

export interface ControlChannel {
  /** Sends a message to every instance, this one included. At most once: see onResubscribed. */
  publish(message: ControlMessage): Promise<void>;
  /** Calls `listener` with every message of this kind, whichever instance sent it. */
  on<K extends ControlKind>(kind: K, listener: (message: ControlMessageOf<K>) => void): void;
  /**
   * Called after the channel's subscription was lost and is active again: messages sent meanwhile are lost, so what
   * they would have invalidated (cached state) must be dropped or checked again.
   */
  onResubscribed(listener: () => void): void;
}

type AnyListener = (message: ControlMessage) => void;

/** Listeners by kind, shared by both backends. */
function listenerTable() {
  const byKind = new Map<ControlKind, AnyListener[]>();
  return {
    add(kind: ControlKind, listener: AnyListener) {
      byKind.set(kind, [...(byKind.get(kind) ?? []), listener]);
    },
    deliver(message: ControlMessage) {
      for (const l of byKind.get(message.kind) ?? []) l(message);
    },
  };
}

/** The control channel on one channel of the link; `subscribed` settles once the broker answered its first subscribe. */
export function createLinkControlChannel(link: PubSubLink, channel: string, logger: Logger): ControlChannel & { subscribed: Promise<void> } {
  const listeners = listenerTable();
  const resubscribed: (() => void)[] = [];
  link.onMessage((ch, bytes) => {
    if (ch !== channel) return;
    const message = parseControlMessage(bytes);
    if (!message) {
      logger.debug({ bytes: bytes.length }, 'control message of an unknown kind or shape ignored');
      return;
    }
    listeners.deliver(message);
  });
  link.onResubscribed(() => {
    for (const l of resubscribed) l();
  });
  // Settles either way: a failed subscribe is retried by the link on reconnection, and readiness then follows the link.
  const subscribed = link.subscribe(channel).catch((err: Error) => logger.warn({ err: { message: err.message } }, 'control channel subscribe failed; retried on reconnection'));
  return {
    subscribed,
    async publish(message) {
      await link.publish(channel, JSON.stringify(message));
    },
    on(kind, listener) {
      listeners.add(kind, listener as AnyListener);
    },
    onResubscribed(listener) {
      resubscribed.push(listener);
    },
  };
}

/** The control channel in process (embedded mode): a message reaches this instance's listeners at once. */
export function createMemoryControlChannel(): ControlChannel {
  const listeners = listenerTable();
  return {
    async publish(message) {
      listeners.deliver(message);
    },
    on(kind, listener) {
      listeners.add(kind, listener as AnyListener);
    },
    onResubscribed() {},
  };
}
