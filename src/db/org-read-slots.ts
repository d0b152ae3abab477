// Database reads of one organization share a bounded number of slots per instance, waiting their turn in a bounded queue.
import { RateLimited } from '../shared/domain-errors.js';

export interface OrgReadSlotsOptions {
  /** Reads of one organization running at once (ORG_READ_SLOTS). */
  slots: number;
  /** Reads of one organization waiting for a slot (ORG_READ_QUEUE_MAX); a new one beyond it is refused with 429. */
  queueMax: number;
  /** A read had to wait for a slot. */
  onWait?: () => void;
  /** A new read (or request) was refused because its organization's queue was full. */
  onRefuse?: () => void;
}

export interface ReadOptions {
  /**
   * The read continues work already admitted (the next page of an export or of a stream's replay, a gap fill): it
   * waits its turn whatever the queue's length, so admitted work is never cut off half-way.
   */
  continues?: boolean;
}

interface Lane {
  running: number;
  waiting: (() => void)[];
  /** Index of the next waiter to run (the queue is consumed from the front without shifting the array). */
  head: number;
}

/**
 * A per-organization limiter of database reads, in the process, before a read takes a pool connection: one
 * organization's replays, exports and listings hold at most `slots` connections of this instance, and the others'
 * reads keep their latency (as an organization's writes wait in their own queue). Every read path of the service goes
 * through one: the listing, exports, the stats figures, and the stream's replay and gap-fill pages.
 */
export function createOrgReadSlots(opts: OrgReadSlotsOptions) {
  const lanes = new Map<string, Lane>();

  const waitingIn = (lane: Lane | undefined) => (lane ? lane.waiting.length - lane.head : 0);

  function refusal(): RateLimited {
    opts.onRefuse?.();
    return new RateLimited(`too many reads of this organization are waiting (${opts.queueMax}, ORG_READ_QUEUE_MAX); retry shortly`, 1);
  }

  /** Whether a new read of the organization would be let in now (its queue has room, or a slot is free). */
  function admits(orgId: string): boolean {
    const lane = lanes.get(orgId);
    return !lane || lane.running < opts.slots || waitingIn(lane) < opts.queueMax;
  }

  function release(orgId: string, lane: Lane): void {
    if (lane.head < lane.waiting.length) {
      const next = lane.waiting[lane.head];
      lane.head++;
      if (lane.head === lane.waiting.length) {
        lane.waiting = [];
        lane.head = 0;
      } else if (lane.head > 1024 && lane.head * 2 > lane.waiting.length) {
        lane.waiting = lane.waiting.slice(lane.head);
        lane.head = 0;
      }
      next(); // the slot passes to the next waiter: `running` stays
      return;
    }
    lane.running--;
    if (lane.running === 0) lanes.delete(orgId);
  }

  /** Runs `read` in one of the organization's slots; a new read finding the queue full is refused (429, Retry-After 1). */
  async function run<T>(orgId: string, read: () => Promise<T>, ro: ReadOptions = {}): Promise<T> {
    let lane = lanes.get(orgId);
    if (!lane) {
      lane = { running: 0, waiting: [], head: 0 };
      lanes.set(orgId, lane);
    }
    if (lane.running < opts.slots) {
      lane.running++;
    } else {
      if (!ro.continues && waitingIn(lane) >= opts.queueMax) throw refusal();
      opts.onWait?.();
      const l = lane;
      await new Promise<void>((resolve) => l.waiting.push(resolve));
    }
    try {
      return await read();
    } finally {
      release(orgId, lane);
    }
  }

  /** Throws the 429 a new request of the organization gets when its queue is full. */
  function admit(orgId: string): void {
    if (!admits(orgId)) throw refusal();
  }

  return {
    run,
    admits,
    admit,
    /** Reads running and waiting, of one organization (tests and metrics). */
    load(orgId: string): { running: number; waiting: number } {
      const lane = lanes.get(orgId);
      return { running: lane?.running ?? 0, waiting: waitingIn(lane) };
    },
  };
}

export type OrgReadSlots = ReturnType<typeof createOrgReadSlots>;
