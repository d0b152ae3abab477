// Where reads that may lag go: a streaming replica (DATABASE_READ_URL) while its measured lag is within the bound, else the primary.
import type { Db } from './db.js';
import { isStorageUnavailable } from './db.js';

/**
 * The reads that tolerate a bounded lag (listing, counts, stats, exports, stream replay) ask `pick()` for a database:
 * the replica while it is known to have replayed everything the primary had committed at most `maxLagMs` ago, the
 * primary otherwise. Reads that must see a just-committed event (gap fill, idempotent retries, sessions, auth) use the
 * primary directly and never come here.
 */
export interface ReadReplica {
  /** The primary itself: what reads fall back to. */
  readonly primary: Db;
  /** The database a lag-tolerant read uses now. */
  pick(): Db;
  /** Whether `db` (from pick) is the replica. */
  isReplica(db: Db): boolean;
  /** Runs `read` on pick(); when the replica is unreachable, marks it stale and runs it on the primary. */
  run<T>(read: (db: Db) => Promise<T>): Promise<T>;
  /**
   * The replica's lag bound in ms (how long ago it was last known to hold all the primary had; Infinity before the
   * first check succeeds), null without a replica.
   */
  lagMs(): number | null;
  close(): Promise<void>;
}

export interface ReadReplicaOptions {
  primary: Db;
  /** The replica (DATABASE_READ_URL), or null: every read goes to the primary. */
  replica: Db | null;
  /** DATABASE_READ_MAX_LAG_MS: the most a read sent to the replica may lag the primary. */
  maxLagMs: number;
  /** DATABASE_READ_LAG_CHECK_MS: how often the replica's replay position is compared with the primary's. */
  checkMs: number;
  /** A read went to the replica or fell back to the primary. */
  onRead?: (to: 'replica' | 'primary') => void;
  /** The lag bound after each check (ms; Infinity while unknown). */
  onLag?: (ms: number) => void;
  onCheckError?: (err: Error) => void;
}

/** Without a replica: every read on the primary. */
export function primaryOnly(primary: Db): ReadReplica {
  return {
    primary,
    pick: () => primary,
    isReplica: () => false,
    run: (read) => read(primary),
    lagMs: () => null,
    close: async () => undefined,
  };
}

/** A WAL position (`X/Y`, both hex) as a number of bytes. */
export function lsnBytes(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(`0x${hi}`) << 32n) + BigInt(`0x${lo}`);
}

/**
 * The lag bound is measured, not estimated from timestamps: each check reads the primary's current WAL position (time
 * t), then the replica's replayed position; the replica holds everything committed before the latest t whose position
 * it has replayed. An idle primary (no new WAL) counts as caught up; a replica that stops answering or replaying
 * ages out after `maxLagMs`, whatever its own clock says.
 */
export function createReadReplica(opts: ReadReplicaOptions): ReadReplica {
  const { primary, replica } = opts;
  if (!replica) return primaryOnly(primary);
  const samples: { at: number; lsn: bigint }[] = [];
  const keepSamples = Math.ceil(opts.maxLagMs / opts.checkMs) + 2;
  /** Time before which everything the primary committed is on the replica (0: not known yet). */
  let freshAsOf = 0;
  let checking = false;
  let closed = false;

  const check = async () => {
    if (checking || closed) return;
    checking = true;
    try {
      const at = Date.now();
      const p = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
      samples.push({ at, lsn: lsnBytes(p.rows[0].lsn) });
      if (samples.length > keepSamples) samples.shift();
      const r = await replica.query<{ lsn: string | null; recovery: boolean }>('SELECT pg_last_wal_replay_lsn()::text AS lsn, pg_is_in_recovery() AS recovery');
      const row = r.rows[0];
      // Not a standby (a pooler in front of the primary, say): it holds what the primary holds.
      if (!row.recovery) freshAsOf = at;
      else if (row.lsn !== null) {
        const replayed = lsnBytes(row.lsn);
        for (let i = samples.length - 1; i >= 0; i--) {
          if (samples[i].lsn <= replayed) {
            freshAsOf = Math.max(freshAsOf, samples[i].at);
            break;
          }
        }
      }
    } catch (err) {
      opts.onCheckError?.(err as Error);
    } finally {
      checking = false;
      opts.onLag?.(lagMs());
    }
  };
  const timer = setInterval(() => void check(), opts.checkMs);
  timer.unref();
  void check();

  const lagMs = () => (freshAsOf === 0 ? Number.POSITIVE_INFINITY : Date.now() - freshAsOf);
  const pick = () => {
    const to = lagMs() <= opts.maxLagMs ? replica : primary;
    opts.onRead?.(to === replica ? 'replica' : 'primary');
    return to;
  };
  return {
    primary,
    pick,
    isReplica: (db) => db === replica,
    async run(read) {
      const db = pick();
      if (db === primary) return read(primary);
      try {
        return await read(db);
      } catch (err) {
        if (!isStorageUnavailable(err)) throw err;
        freshAsOf = 0; // until the next check finds it again
        opts.onRead?.('primary');
        return read(primary);
      }
    },
    lagMs,
    async close() {
      closed = true;
      clearInterval(timer);
      await replica.close();
    },
  };
}
