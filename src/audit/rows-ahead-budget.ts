// Which writes get their rows made before their turn: at most a group's worth of events per organization, counting
// the writes in its queue and those still being prepared.

export interface RowsAheadBudget {
  /** True (and counted until give) when `n` more events of the organization may have their rows made ahead. */
  take(orgId: string, n: number): boolean;
  /** Gives back what take counted, once the write has joined the queue (which counts it from then on) or failed. */
  give(orgId: string, n: number): void;
}

/**
 * `maxEvents` (ORG_WRITE_GROUP_MAX_EVENTS) bounds, per organization, the events of the writes queued (`queued`: running
 * and waiting) plus those being prepared with rows, with the asking write's own. A write beyond it keeps only its
 * events while it waits; its rows are made in its turn.
 */
export function createRowsAheadBudget(maxEvents: number, queued: (orgId: string) => number): RowsAheadBudget {
  const preparing = new Map<string, number>();
  return {
    take(orgId, n) {
      const now = preparing.get(orgId) ?? 0;
      if (queued(orgId) + now + n > maxEvents) return false;
      preparing.set(orgId, now + n);
      return true;
    },
    give(orgId, n) {
      const left = (preparing.get(orgId) ?? 0) - n;
      if (left > 0) preparing.set(orgId, left);
      else preparing.delete(orgId);
    },
  };
}
