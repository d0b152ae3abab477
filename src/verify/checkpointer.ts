// Issues each organization's signed checkpoints: once it has CHECKPOINT_EVERY_EVENTS events past its latest one, or
// every CHECKPOINT_INTERVAL_MS when it has any. Only committed sizes (confirmed by a synchronous standby when one is
// configured) are signed, and only when the tree extends the latest checkpoint: never two inconsistent ones.
import type { Logger } from 'pino';
import type { Db, Queryable } from '../db/db.js';
import { checkpointText, originOf, parseCheckpointText } from './checkpoint.js';
import { insertCheckpoint, latestCheckpoint, logSize, type StoredCheckpoint } from './merkle-sql.js';
import { openNote, signNote, type NoteSigner, type NoteVerifier } from './signed-note.js';
import { withStoredNodes } from './stored-nodes.js';
import { rootAt } from './tree.js';

/** The advisory lock class serializing the checkpoints of one organization across instances. */
const CHECKPOINT_LOCK = 0x6d6b6c01;
/** Organizations looked at per interval tick. */
const ORGS_PER_TICK = 1000;

export interface CheckpointerDeps {
  db: Db;
  signer: NoteSigner;
  /** Every verifier key the log published (the latest checkpoint may be signed by a rotated one), read with `q`. */
  verifiers: (q: Queryable) => Promise<NoteVerifier[]>;
  publicHost: string;
  everyEvents: number;
  intervalMs: number;
  logger: Logger;
  /** Called after a checkpoint is stored (the stream sends it to clients that asked). */
  onIssued?: (orgId: string, checkpoint: StoredCheckpoint) => void;
  /** A checkpoint refused because the tree does not extend the latest one (or that one's signature fails). */
  onRefused?: (orgId: string) => void;
}

export interface Checkpointer {
  /** Counts appended events of an organization; past CHECKPOINT_EVERY_EVENTS, a checkpoint is issued. */
  appended(orgId: string, count: number): void;
  /** Issues a checkpoint of the organization's committed log now, when it grew; returns it (null: nothing new or refused). */
  issue(orgId: string): Promise<StoredCheckpoint | null>;
  start(): void;
  stop(): Promise<void>;
}

/**
 * With a synchronous standby configured (Postgres synchronous_standby_names), whether it has flushed the WAL up to
 * `lsn`; true when none is configured (and on the embedded database).
 */
async function standbyConfirmed(db: Queryable, kind: Db['kind'], lsn: string | null): Promise<boolean> {
  if (kind !== 'postgres' || lsn === null) return true;
  const r = await db.query<{ ok: boolean | null }>(
    `SELECT CASE WHEN current_setting('synchronous_standby_names') = '' THEN true
       ELSE (SELECT coalesce(bool_or(flush_lsn >= $1::pg_lsn), false) FROM pg_stat_replication WHERE sync_state IN ('sync', 'quorum')) END AS ok`,
    [lsn],
  );
  return r.rows[0]?.ok === true;
}

export function createCheckpointer(deps: CheckpointerDeps): Checkpointer {
  const pending = new Map<string, number>();
  const running = new Map<string, Promise<StoredCheckpoint | null>>();
  let timer: NodeJS.Timeout | null = null;
  let tick: Promise<void> | null = null;

  async function issueNow(orgId: string): Promise<StoredCheckpoint | null> {
    const out = await deps.db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CHECKPOINT_LOCK, orgId]);
      // Read committed: the size (and the tiles read below) are of committed appends.
      const size = await logSize(tx, orgId);
      const lsn = deps.db.kind === 'postgres' ? (await tx.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0].lsn : null;
      const latest = await latestCheckpoint(tx, orgId);
      if (!size || (latest && latest.size >= size)) return null;
      if (!(await standbyConfirmed(tx, deps.db.kind, lsn))) return null;
      let latestRoot: Buffer | null = null;
      if (latest) {
        try {
          latestRoot = parseCheckpointText(openNote(latest.note, await deps.verifiers(tx)).text).root;
        } catch (err) {
          deps.logger.error({ orgId, size: latest.size, err: { message: (err as Error).message } }, 'the latest stored checkpoint does not verify; no checkpoint is issued');
          deps.onRefused?.(orgId);
          return null;
        }
      }
      const [root, before] = await withStoredNodes(tx, orgId, (nodes) => [rootAt(size, nodes), latest ? rootAt(latest.size, nodes) : null]);
      if (latest && !before!.equals(latestRoot!)) {
        deps.logger.error({ orgId, size, latestSize: latest.size }, 'the log does not extend its latest checkpoint; no checkpoint is issued');
        deps.onRefused?.(orgId);
        return null;
      }
      const note = signNote(checkpointText({ origin: originOf(deps.publicHost, orgId), size, root }), [deps.signer]);
      if (!(await insertCheckpoint(tx, orgId, { size, root, note }))) return null;
      return { size, root, note, issuedAt: new Date() };
    });
    if (out) deps.onIssued?.(orgId, out);
    return out;
  }

  function issue(orgId: string): Promise<StoredCheckpoint | null> {
    const had = running.get(orgId);
    if (had) return had.then(() => issue(orgId));
    const p = issueNow(orgId).finally(() => running.delete(orgId));
    running.set(orgId, p);
    return p;
  }

  function issueLogged(orgId: string): void {
    issue(orgId).catch((err: Error) => deps.logger.warn({ orgId, err: { message: err.message } }, 'checkpoint not issued; retried at the next interval'));
  }

  async function sweep(): Promise<void> {
    const r = await deps.db.query<{ org_id: string }>(
      `SELECT l.org_id FROM merkle_logs l
       WHERE l.size > coalesce((SELECT max(c.size) FROM merkle_checkpoints c WHERE c.org_id = l.org_id), 0)
       ORDER BY l.org_id LIMIT ${ORGS_PER_TICK}`,
    );
    for (const row of r.rows) {
      pending.delete(row.org_id);
      await issue(row.org_id).catch((err: Error) => deps.logger.warn({ orgId: row.org_id, err: { message: err.message } }, 'checkpoint not issued'));
    }
  }

  return {
    appended(orgId, count) {
      const n = (pending.get(orgId) ?? 0) + count;
      if (n < deps.everyEvents) {
        pending.set(orgId, n);
        return;
      }
      pending.delete(orgId);
      issueLogged(orgId);
    },
    issue,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        if (tick) return;
        tick = sweep()
          .catch((err: Error) => deps.logger.warn({ err: { message: err.message } }, 'checkpoint sweep failed'))
          .finally(() => (tick = null));
      }, deps.intervalMs);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await tick;
      await Promise.allSettled([...running.values()]);
    },
  };
}
