// The event log's Merkle step: in the transaction that assigns seqs (holding the organization's seq lock), the leaf
// hashes of the new records are added to the organization's tree, growing its tiles; a log left behind (events
// appended while MERKLE_LOG was off, or before the log existed) is caught up first, a bounded page per append.
import type { Logger } from 'pino';
import { createHash, type Hash } from 'node:crypto';
import type { Queryable } from '../db/db.js';
import { toAuditEventRow, type AuditEventDbRow } from '../audit/audit-repo.js';
import { readBytePage } from '../audit/byte-pages.js';
import { canonicalJson } from '../audit/event-log/canonical-json.js';
import type { NewAuditEvent } from '../audit/audit-types.js';
import { canonicalBytes, type CanonicalRecord } from '../audit/event-log/canonical-record.js';
import { createLogRow, growLog, logSize, readTiles, tileKey, type TileGrowth } from './merkle-sql.js';
import { HASH_SIZE, leafHash } from './tree.js';
import { perfectRoot, TILE_WIDTH, type TileRef } from './tiles.js';

/** The leaf hash of a record: SHA-256(0x00 || its RFC 8785 bytes). */
export function recordLeafHash(record: CanonicalRecord): Buffer {
  return leafHash(canonicalBytes(record));
}

/**
 * A record's leaf hash in two parts. The RFC 8785 keys sort as action, latencyMs, metadata, occurredAt, receivedAt,
 * seq, serverId, ...: everything before receivedAt (metadata, the costly part) is written and hashed before the seq
 * lock, from the event; under it, the hash state is copied and finished with receivedAt, seq and the fields after them.
 */
interface LeafPrefix {
  state: Hash;
  suffix: string;
}

function leafPrefix(e: NewAuditEvent): LeafPrefix {
  return {
    state: createHash('sha256').update(`\u0000{"action":${JSON.stringify(e.action ?? null)},"latencyMs":${JSON.stringify(e.latencyMs ?? null)},"metadata":${canonicalJson(e.metadata ?? {})},"occurredAt":${JSON.stringify(e.occurredAt.toISOString())},"receivedAt":`),
    suffix: `"serverId":${JSON.stringify(e.serverId ?? null)},"sessionId":${JSON.stringify(e.sessionId ?? null)},"source":${JSON.stringify(e.source)},"toolName":${JSON.stringify(e.toolName ?? null)},"type":${JSON.stringify(e.type)}}`,
  };
}

function finishLeaf(t: LeafPrefix, record: CanonicalRecord): Buffer {
  return t.state.copy().update(`${JSON.stringify(record.receivedAt)},"seq":${record.seq},${t.suffix}`).digest();
}

/** The tiles written and read when `count` hashes join a tree of `size` leaves: per level, the run of new entries. */
function levelRuns(size: number, count: number): { level: number; start: number; count: number }[] {
  const runs = [];
  for (let level = 0, start = size, n = count; n > 0; level++) {
    runs.push({ level, start, count: n });
    const next = Math.floor(start / TILE_WIDTH);
    n = Math.floor((start + n) / TILE_WIDTH) - next;
    start = next;
  }
  return runs;
}

export class MerkleLogMismatch extends Error {}

/**
 * Adds `leaves` (hashes of seqs size+1, size+2, ...) to a tree of `size` leaves in `tx`. Reads only the right-edge
 * tiles a new entry completes. Returns false (writing nothing) when the stored log is not at `size`.
 */
export async function addLeaves(tx: Queryable, orgId: string, size: number, leaves: readonly Buffer[]): Promise<boolean> {
  const runs = levelRuns(size, leaves.length);
  const toRead: TileRef[] = runs.filter((r) => r.start % TILE_WIDTH > 0 && (r.start % TILE_WIDTH) + r.count >= TILE_WIDTH).map((r) => ({ level: r.level, index: Math.floor(r.start / TILE_WIDTH) }));
  const read = await readTiles(tx, orgId, toRead);
  const growths: TileGrowth[] = [];
  let entries: Buffer[] = leaves.slice();
  for (const run of runs) {
    const at = run.start % TILE_WIDTH;
    const firstTile = Math.floor(run.start / TILE_WIDTH);
    // The new entries of this level, grouped by tile.
    for (let i = 0; i < entries.length; ) {
      const pos = run.start + i;
      const take = Math.min(entries.length - i, TILE_WIDTH - (pos % TILE_WIDTH));
      growths.push({ level: run.level, index: Math.floor(pos / TILE_WIDTH), at: pos % TILE_WIDTH, hashes: Buffer.concat(entries.slice(i, i + take)) });
      i += take;
    }
    // The roots of the tiles these entries complete are the next level's entries.
    let all = entries;
    if (at > 0 && at + entries.length >= TILE_WIDTH) {
      const prefix = read.get(tileKey({ level: run.level, index: firstTile }));
      if (!prefix || prefix.length !== at * HASH_SIZE) {
        // A log behind (switched on late, or older than its events) holds no such tile yet: the caller catches it up.
        if ((await logSize(tx, orgId)) !== size) return false;
        throw new MerkleLogMismatch(`tile ${run.level}/${firstTile} of the organization's log does not hold the ${at} hashes its size says`);
      }
      all = [...Array.from({ length: at }, (_, k) => prefix.subarray(k * HASH_SIZE, (k + 1) * HASH_SIZE)), ...entries];
    }
    const base = run.start - (all.length - entries.length);
    const next: Buffer[] = [];
    for (let t = firstTile; (t + 1) * TILE_WIDTH <= run.start + run.count; t++) next.push(perfectRoot(all.slice(t * TILE_WIDTH - base, (t + 1) * TILE_WIDTH - base)));
    entries = next;
  }
  const out = await growLog(tx, orgId, size, size + leaves.length, growths);
  if (!out.moved) return false;
  if (out.tiles !== growths.length) throw new MerkleLogMismatch(`the organization's log tiles do not match its size ${size}`);
  return true;
}

export interface MerkleStepDeps {
  logger: Logger;
  /** Most stored events one append adds to a log that is behind (MERKLE_CATCHUP_EVENTS). */
  catchupEvents: number;
  /** Most bytes of stored events one append reads to catch a log up (READ_PAGE_MAX_BYTES). */
  catchupMaxBytes: number;
}

/** The step the event log runs inside each append transaction, after its rows: the records' leaves join the tree. */
export interface MerkleStep {
  /** Before the seq lock: hashes what of each event's leaf does not depend on its seq (kept for the event object). */
  prepare(events: readonly NewAuditEvent[]): void;
  /**
   * `records` are the append's, in seq order, following `lastSeq` (the organization's last seq before it); `events[i]`
   * is the event records[i] was made from (a prepared one finishes its hash; another is hashed whole).
   */
  appended(tx: Queryable, orgId: string, lastSeq: number, records: readonly CanonicalRecord[], events?: readonly NewAuditEvent[]): Promise<void>;
}

export function createMerkleStep(deps: MerkleStepDeps): MerkleStep {
  const prepared = new WeakMap<NewAuditEvent, LeafPrefix>();
  /**
   * Adds stored events after the log's size, one bounded page of MERKLE_CATCHUP_EVENTS more than the append adds (so a
   * log behind gains on any steady load), at most READ_PAGE_MAX_BYTES; returns the log's size after.
   */
  async function catchUp(tx: Queryable, orgId: string, size: number, lastSeq: number, appending: number): Promise<number> {
    const page = await readBytePage<AuditEventDbRow>(tx, {
      where: ['org_id = $1', 'seq > $2', 'seq <= $3'],
      params: [orgId, size, lastSeq],
      order: 'asc',
      limit: deps.catchupEvents + appending,
      maxBytes: deps.catchupMaxBytes,
    });
    const records = page.rows.map(toAuditEventRow);
    if (records.length === 0 || records.some((r, i) => r.seq !== size + 1 + i)) {
      deps.logger.error({ orgId, size, firstStored: records[0]?.seq ?? null }, 'the verifiable log cannot be caught up: events after its size are not stored (removed before the log held them)');
      return size;
    }
    if (!(await addLeaves(tx, orgId, size, records.map(recordLeafHash)))) throw new MerkleLogMismatch('the organization\'s log changed while it was caught up');
    return size + records.length;
  }

  return {
    prepare(events) {
      for (const e of events) prepared.set(e, leafPrefix(e));
    },
    async appended(tx, orgId, lastSeq, records, events) {
      if (records.length === 0) return;
      const leaves = records.map((r, i) => {
        const p = events && prepared.get(events[i]);
        return p ? finishLeaf(p, r) : recordLeafHash(r);
      });
      if (await addLeaves(tx, orgId, lastSeq, leaves)) return;
      let size = await logSize(tx, orgId);
      if (size === null) {
        await createLogRow(tx, orgId);
        size = 0;
      }
      if (size > lastSeq) throw new MerkleLogMismatch(`the organization's log holds ${size} leaves but its last seq is ${lastSeq}: events were removed outside the service`);
      const caught = await catchUp(tx, orgId, size, lastSeq, records.length);
      // Still behind: these leaves wait for a later append to reach them.
      if (caught < lastSeq) return;
      if (!(await addLeaves(tx, orgId, lastSeq, leaves))) throw new MerkleLogMismatch('the organization\'s log changed during an append');
    },
  };
}
