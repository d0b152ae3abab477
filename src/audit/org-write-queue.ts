// Writes of one organization wait their turn in the process, one at a time, before they take a database connection.
import { RateLimited, Unavailable } from '../shared/domain-errors.js';
import { isStorageUnavailable } from '../db/db.js';
import { createSerialQueue, type SerialQueue } from '../db/serial-queue.js';

interface Lane {
  run: SerialQueue;
  /** Writes in the lane: the one running and those waiting. */
  size: number;
  /** Writes of the lane that failed because storage was unavailable, so far. */
  outages: number;
}

export interface OrgWriteQueueOptions {
  /** Writes of one organization that may wait behind the running one (ORG_WRITE_QUEUE_MAX); more are refused with 429. */
  maxWaiting: number;
}

/**
 * Every write of an organization takes its seq lock, so its writes run one at a time anyway. Waiting here, in the
 * process, instead of on that lock, leaves the pool's connections to the other organizations: one organization's burst
 * holds at most one connection per instance, and the others' reads and writes keep their latency.
 */
export function createOrgWriteQueue(opts: OrgWriteQueueOptions) {
  const lanes = new Map<string, Lane>();

  return {
    /** Runs `fn` in the organization's turn; `internal` writes (anomaly alerts) wait without counting against the bound. */
    async run<T>(orgId: string, fn: () => Promise<T>, internal = false): Promise<T> {
      const lane = lanes.get(orgId) ?? { run: createSerialQueue(), size: 0, outages: 0 };
      if (!internal && lane.size > opts.maxWaiting) {
        throw new RateLimited(`too many writes of this organization are waiting (${opts.maxWaiting}, ORG_WRITE_QUEUE_MAX); retry shortly`, 1);
      }
      lanes.set(orgId, lane);
      const outagesBefore = lane.outages;
      lane.size++;
      try {
        return await lane.run(async () => {
          // A write ahead of this one found storage unavailable: answer 503 now, as it would have, instead of waiting
          // for a timeout of its own behind every other waiting write.
          if (lane.outages > outagesBefore) throw new Unavailable();
          try {
            return await fn();
          } catch (err) {
            if (isStorageUnavailable(err)) lane.outages++;
            throw err;
          }
        });
      } finally {
        lane.size--;
        if (lane.size === 0) lanes.delete(orgId);
      }
    },
  };
}

export type OrgWriteQueue = ReturnType<typeof createOrgWriteQueue>;
