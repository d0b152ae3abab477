// Writes of one organization wait their turn in the process, one at a time (or as one group), before they take a database connection.
import { RateLimited, Unavailable } from '../shared/domain-errors.js';
import { isStorageUnavailable } from '../db/db.js';

/** What one member of a group came to: its own value, or its own error (the others of the group are not affected). */
export type MemberOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Waiter {
  /** Set for a write that may be stored together with the groupable writes waiting next to it; its size in events. */
  group: { job: unknown; weight: number } | null;
  /** A write that runs alone (session transitions, internal writes). */
  solo: (() => Promise<unknown>) | null;
  /** The lane's outage count when it joined: a storage outage seen since then answers it 503 at once. */
  outagesBefore: number;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Lane {
  waiting: Waiter[];
  /** Writes in the lane: those running and those waiting. */
  size: number;
  /** Events of the groupable writes in the lane, running and waiting. */
  events: number;
  /** Writes of the lane that failed because storage was unavailable, so far. */
  outages: number;
}

export interface OrgWriteQueueOptions<J, R> {
  /** Writes of one organization that may wait behind the running one (ORG_WRITE_QUEUE_MAX); more are refused with 429. */
  maxWaiting: number;
  /**
   * Most events one group of writes may hold (ORG_WRITE_GROUP_MAX_EVENTS): the groupable writes waiting in a lane are
   * taken together, in arrival order, while their sizes add up to at most this (a larger write still runs alone).
   * 0 turns grouping off.
   */
  maxGroupEvents: number;
  /**
   * Runs the jobs of one group (in arrival order, at least one) and answers each with its own outcome, in the same
   * order. Throwing fails every member with that error (a storage outage, for instance).
   */
  runGroup(orgId: string, jobs: J[]): Promise<MemberOutcome<R>[]>;
}

/**
 * Every write of an organization takes its seq lock, so its writes run one at a time anyway. Waiting here, in the
 * process, instead of on that lock, leaves the pool's connections to the other organizations: one organization's burst
 * holds at most one connection per instance, and the others' reads and writes keep their latency. Groupable writes
 * (ingest requests) that queued behind the running one are handed to `runGroup` together when their turn comes
 * (group commit: one transaction, one hold of the seq lock for all of them).
 */
export function createOrgWriteQueue<J, R>(opts: OrgWriteQueueOptions<J, R>) {
  const lanes = new Map<string, Lane>();

  /** The 429 of a write arriving while the organization's queue is at its bound, or null when there is room. */
  function refusal(orgId: string): RateLimited | null {
    const lane = lanes.get(orgId);
    return lane && lane.size > opts.maxWaiting ? new RateLimited(`too many writes of this organization are waiting (${opts.maxWaiting}, ORG_WRITE_QUEUE_MAX); retry shortly`, 1) : null;
  }

  function enter(orgId: string, internal: boolean, make: (outagesBefore: number, settle: Pick<Waiter, 'resolve' | 'reject'>) => Waiter): Promise<unknown> {
    const refused = internal ? null : refusal(orgId);
    if (refused) return Promise.reject(refused);
    let lane = lanes.get(orgId);
    const fresh = !lane;
    lane ??= { waiting: [], size: 0, events: 0, outages: 0 };
    lanes.set(orgId, lane);
    lane.size++;
    const l = lane;
    const answer = new Promise<unknown>((resolve, reject) => {
      const w = make(l.outages, { resolve, reject });
      if (w.group) l.events += w.group.weight;
      l.waiting.push(w);
    });
    if (fresh) void drain(orgId, l);
    return answer;
  }

  function done(lane: Lane, w: Waiter, outcome: MemberOutcome<unknown>): void {
    lane.size--;
    if (w.group) lane.events -= w.group.weight;
    if (!outcome.ok && isStorageUnavailable(outcome.error)) lane.outages++;
    if (outcome.ok) w.resolve(outcome.value);
    else w.reject(outcome.error);
  }

  /** The waiters to run next: one solo write, or the groupable writes at the head of the lane within the bound. */
  function nextTurn(lane: Lane): Waiter[] {
    const head = lane.waiting.shift()!;
    if (!head.group) return [head];
    const turn = [head];
    let events = head.group.weight;
    while (lane.waiting.length) {
      const next = lane.waiting[0];
      if (!next.group || events + next.group.weight > opts.maxGroupEvents) break;
      events += next.group.weight;
      turn.push(lane.waiting.shift()!);
    }
    return turn;
  }

  async function drain(orgId: string, lane: Lane): Promise<void> {
    while (lane.waiting.length) {
      const turn = nextTurn(lane);
      // A write ahead of these found storage unavailable: answer 503 now, as it would have, instead of waiting for a
      // timeout of its own behind every other waiting write.
      const live: Waiter[] = [];
      for (const w of turn) {
        if (lane.outages > w.outagesBefore) done(lane, w, { ok: false, error: new Unavailable() });
        else live.push(w);
      }
      if (live.length === 0) continue;
      try {
        if (live[0].solo) {
          done(lane, live[0], { ok: true, value: await live[0].solo() });
        } else {
          const outcomes = await opts.runGroup(orgId, live.map((w) => w.group!.job as J));
          live.forEach((w, i) => done(lane, w, outcomes[i] as MemberOutcome<unknown>));
        }
      } catch (err) {
        for (const w of live) done(lane, w, { ok: false, error: err });
      }
    }
    lanes.delete(orgId);
  }

  return {
    /** Throws the 429 a write of the organization would get now, before the caller prepares it. */
    refuseIfFull(orgId: string): void {
      const refused = refusal(orgId);
      if (refused) throw refused;
    },
    /** Writes of the organization in its lane now: running and waiting. */
    size(orgId: string): number {
      return lanes.get(orgId)?.size ?? 0;
    },
    /** Events of the organization's groupable writes in its lane now: running and waiting. */
    events(orgId: string): number {
      return lanes.get(orgId)?.events ?? 0;
    },
    /** Runs `fn` alone in the organization's turn; `internal` writes (anomaly alerts) wait without counting against the bound. */
    run<T>(orgId: string, fn: () => Promise<T>, internal = false): Promise<T> {
      return enter(orgId, internal, (outagesBefore, settle) => ({ group: null, solo: fn, outagesBefore, ...settle })) as Promise<T>;
    },
    /** Queues a groupable write of `weight` events; it is stored by `runGroup`, alone or with others that waited beside it. */
    join(orgId: string, job: J, weight: number): Promise<R> {
      const grouping = opts.maxGroupEvents > 0;
      return enter(orgId, false, (outagesBefore, settle) =>
        grouping ? { group: { job, weight }, solo: null, outagesBefore, ...settle } : { group: null, solo: () => single(orgId, job), outagesBefore, ...settle },
      ) as Promise<R>;
    },
  };

  async function single(orgId: string, job: J): Promise<R> {
    const [outcome] = await opts.runGroup(orgId, [job]);
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }
}

export type OrgWriteQueue<J, R> = ReturnType<typeof createOrgWriteQueue<J, R>>;
