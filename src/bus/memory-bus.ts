// In-process Bus for the embedded single-instance mode: delivery is a function call.
import type { PublishedBatch } from '../audit/audit-types.js';
import type { BatchHandler, Bus, ControlMessage } from './bus.js';

export function createMemoryBus(): Bus {
  const handlers = new Map<string, Set<BatchHandler>>();
  const controlListeners: ((m: ControlMessage) => void)[] = [];
  return {
    kind: 'memory',
    async publish(batch: PublishedBatch) {
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
    async publishControl(message) {
      for (const l of controlListeners) l(message);
    },
    onControl(listener) {
      controlListeners.push(listener);
    },
    async connected() {},
    async ping() {},
    async close() {
      handlers.clear();
    },
  };
}
