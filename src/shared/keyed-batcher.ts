// A keyed batcher: jobs of one key run one turn at a time, in arrival order; the batchable jobs waiting behind a turn
// are handed over together (group commit), each answered with its own outcome. Nothing here knows what a job does.

/** What one job of a batch came to: its own value, or its own error (the others of the batch are not affected). */
export type JobOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface KeyedBatcherOptions<J, R> {
  /** Jobs of one key that may wait behind the running turn; one more is refused with `refuse()`'s error. */
  maxWaiting: number;
  /** Most weight (e.g. events) one batch may hold; a heavier job still runs alone. 0: every job runs alone. */
  maxBatchWeight: number;
  /** Runs the jobs of one batch (arrival order, at least one) and answers each, in the same order. Throwing fails all. */
  runBatch(key: string, jobs: J[]): Promise<JobOutcome<R>[]>;
  /** The error of a job refused because its key's queue is full. */
  refuse(): Error;
  /**
   * True for an error that the jobs waiting behind the failed turn would meet too (the store is unreachable): they are
   * answered with `followerError()` at once instead of trying in turn.
   */
  failsFollowers(error: unknown): boolean;
  followerError(): Error;
}

interface Waiter {
  /** A batchable job and its weight; null for a job that runs alone. */
  batch: { job: unknown; weight: number } | null;
  alone: (() => Promise<unknown>) | null;
  /** The lane's failure count when the job joined: a failure since then answers it at once. */
  failuresBefore: number;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Lane {
  waiting: Waiter[];
  /** Jobs running and waiting. */
  size: number;
  /** Weight of the batchable jobs running and waiting. */
  weight: number;
  /** Turns that failed with an error that fails followers, so far. */
  failures: number;
}

export function createKeyedBatcher<J, R>(opts: KeyedBatcherOptions<J, R>) {
  const lanes = new Map<string, Lane>();

  const full = (key: string) => (lanes.get(key)?.size ?? 0) > opts.maxWaiting;

  function enter(key: string, counted: boolean, make: (failuresBefore: number, settle: Pick<Waiter, 'resolve' | 'reject'>) => Waiter): Promise<unknown> {
    if (counted && full(key)) return Promise.reject(opts.refuse());
    let lane = lanes.get(key);
    const fresh = !lane;
    lane ??= { waiting: [], size: 0, weight: 0, failures: 0 };
    lanes.set(key, lane);
    lane.size++;
    const l = lane;
    const answer = new Promise<unknown>((resolve, reject) => {
      const w = make(l.failures, { resolve, reject });
      if (w.batch) l.weight += w.batch.weight;
      l.waiting.push(w);
    });
    if (fresh) void drain(key, l);
    return answer;
  }

  function settle(lane: Lane, w: Waiter, outcome: JobOutcome<unknown>): void {
    lane.size--;
    if (w.batch) lane.weight -= w.batch.weight;
    if (!outcome.ok && opts.failsFollowers(outcome.error)) lane.failures++;
    if (outcome.ok) w.resolve(outcome.value);
    else w.reject(outcome.error);
  }

  /** The next turn: one job that runs alone, or the batchable jobs at the head of the lane within the weight bound. */
  function nextTurn(lane: Lane): Waiter[] {
    const head = lane.waiting.shift()!;
    if (!head.batch) return [head];
    const turn = [head];
    let weight = head.batch.weight;
    while (lane.waiting.length) {
      const next = lane.waiting[0];
      if (!next.batch || weight + next.batch.weight > opts.maxBatchWeight) break;
      weight += next.batch.weight;
      turn.push(lane.waiting.shift()!);
    }
    return turn;
  }

  async function drain(key: string, lane: Lane): Promise<void> {
    while (lane.waiting.length) {
      const live: Waiter[] = [];
      for (const w of nextTurn(lane)) {
        if (lane.failures > w.failuresBefore) settle(lane, w, { ok: false, error: opts.followerError() });
        else live.push(w);
      }
      if (live.length === 0) continue;
      try {
        if (live[0].alone) {
          settle(lane, live[0], { ok: true, value: await live[0].alone() });
        } else {
          const outcomes = await opts.runBatch(key, live.map((w) => w.batch!.job as J));
          live.forEach((w, i) => settle(lane, w, outcomes[i]));
        }
      } catch (err) {
        for (const w of live) settle(lane, w, { ok: false, error: err });
      }
    }
    lanes.delete(key);
  }

  return {
    /** Throws the error a counted job of `key` would get now, before the caller prepares it. */
    refuseIfFull(key: string): void {
      if (full(key)) throw opts.refuse();
    },
    /** Jobs of `key` running and waiting. */
    size: (key: string): number => lanes.get(key)?.size ?? 0,
    /** Queues a batchable job of `weight`; runBatch runs it, alone or with those waiting beside it. */
    join(key: string, job: J, weight: number): Promise<R> {
      return enter(key, true, (failuresBefore, s) =>
        opts.maxBatchWeight > 0 ? { batch: { job, weight }, alone: null, failuresBefore, ...s } : { batch: null, alone: () => single(key, job), failuresBefore, ...s },
      ) as Promise<R>;
    },
    /** Runs `fn` alone in `key`'s turn. `counted: false` (the service's own writes) waits without counting against maxWaiting. */
    alone<T>(key: string, fn: () => Promise<T>, counted = true): Promise<T> {
      return enter(key, counted, (failuresBefore, s) => ({ batch: null, alone: fn, failuresBefore, ...s })) as Promise<T>;
    },
  };

  async function single(key: string, job: J): Promise<R> {
    const [outcome] = await opts.runBatch(key, [job]);
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  }
}

export type KeyedBatcher<J, R> = ReturnType<typeof createKeyedBatcher<J, R>>;
