// Proofs of an organization's log as the API serves them: each is checked before it is served, against the stored
// event (its leaf recomputed) and against the signed checkpoint of its size; a mismatch names the first bad seq.
import { apiEventColumnsSql } from '../audit/byte-pages.js';
import type { Queryable } from '../db/db.js';
import { removedThroughSeq, toAuditEventRow, type AuditEventDbRow } from '../audit/audit-repo.js';
import { DomainError, InvalidInput, NotFound } from '../shared/domain-errors.js';
import { parseCheckpointText } from './checkpoint.js';
import { recordLeafHash } from './merkle-append.js';
import { checkpointOfSize, logSize, type StoredCheckpoint } from './merkle-sql.js';
import { openNote, type NoteVerifier } from './signed-note.js';
import { MissingHashes, withStoredNodes } from './stored-nodes.js';
import { consistencyProof, inclusionProof, rangeHash, rootAt, verifyConsistency, verifyInclusion } from './tree.js';

/** The log's stored hashes or events disagree with what was signed or appended: names the first bad seq when it is known. */
export class LogMismatch extends DomainError {
  constructor(message: string, public readonly firstBadSeq: number | null) {
    super('conflict', message, { code: 'log_mismatch', details: { firstBadSeq } });
  }
}

export interface InclusionAnswer {
  seq: number;
  leafIndex: number;
  treeSize: number;
  leafHash: string;
  rootHash: string;
  proof: string[];
  /** The signed checkpoint of treeSize, when one was issued. */
  checkpoint: string | null;
  /** False when retention removed the event (its leaf stays provable). */
  eventStored: boolean;
}

export interface ConsistencyAnswer {
  from: number;
  to: number;
  fromRoot: string;
  toRoot: string;
  proof: string[];
  fromCheckpoint: string | null;
  toCheckpoint: string | null;
}

const b64 = (b: Buffer) => b.toString('base64');

/** The root a stored checkpoint signed (its note verified with the published keys), or throws LogMismatch. */
function signedRoot(c: StoredCheckpoint, verifiers: readonly NoteVerifier[]): Buffer {
  try {
    const parsed = parseCheckpointText(openNote(c.note, verifiers).text);
    if (parsed.size !== c.size) throw new Error('its size line differs from its stored size');
    return parsed.root;
  } catch (err) {
    throw new LogMismatch(`the stored checkpoint of size ${c.size} does not verify: ${(err as Error).message}`, null);
  }
}

async function checkedSize(db: Queryable, orgId: string, size: number): Promise<number> {
  const have = (await logSize(db, orgId)) ?? 0;
  if (size > have) throw new InvalidInput(`the log holds ${have} leaves; size ${size} is past it`, [{ path: 'size', message: `at most ${have}` }], 'size_past_log');
  return have;
}

function missing<T>(p: Promise<T>): Promise<T> {
  return p.catch((err: unknown) => {
    if (err instanceof MissingHashes) throw new NotFound(`${err.message}: removed with the events retention removed, and not needed by a checkpoint`);
    throw err;
  });
}

/** The event of `seq` as stored, or null when it is not stored. */
async function storedEvent(db: Queryable, orgId: string, seq: number) {
  const r = await db.query<AuditEventDbRow>(`SELECT ${apiEventColumnsSql('e')} FROM audit_events e WHERE org_id = $1 AND seq = $2`, [orgId, seq]);
  return r.rows.length ? toAuditEventRow(r.rows[0]) : null;
}

export async function proveInclusion(db: Queryable, orgId: string, seq: number, size: number, verifiers: readonly NoteVerifier[]): Promise<InclusionAnswer> {
  await checkedSize(db, orgId, size);
  if (seq > size) throw new InvalidInput(`seq ${seq} is not in a tree of ${size} leaves`, [{ path: 'seq', message: `at most ${size}` }]);
  const index = seq - 1;
  const { leaf, root, proof } = await missing(
    withStoredNodes(db, orgId, (nodes) => ({ leaf: rangeHash(index, index + 1, nodes), root: rootAt(size, nodes), proof: inclusionProof(index, size, nodes) })),
  );
  const event = await storedEvent(db, orgId, seq);
  if (event && !recordLeafHash(event).equals(leaf)) throw new LogMismatch(`the stored event of seq ${seq} differs from the event the log appended`, seq);
  if (!event && seq > (await removedThroughSeq(db, orgId))) throw new LogMismatch(`the event of seq ${seq} is missing from the stored events, and retention did not remove it`, seq);
  const checkpoint = await checkpointOfSize(db, orgId, size);
  if (checkpoint && !signedRoot(checkpoint, verifiers).equals(root)) throw new LogMismatch(`the log's stored hashes do not match its signed checkpoint of size ${size}`, null);
  if (!verifyInclusion(index, size, leaf, proof, root)) throw new LogMismatch(`the inclusion proof of seq ${seq} does not verify`, seq);
  return { seq, leafIndex: index, treeSize: size, leafHash: b64(leaf), rootHash: b64(root), proof: proof.map(b64), checkpoint: checkpoint?.note ?? null, eventStored: event !== null };
}

export async function proveConsistency(db: Queryable, orgId: string, from: number, to: number, verifiers: readonly NoteVerifier[]): Promise<ConsistencyAnswer> {
  await checkedSize(db, orgId, to);
  if (!(from >= 1 && from <= to)) throw new InvalidInput('a consistency proof needs 1 <= from <= to', [{ path: 'from', message: `between 1 and ${to}` }]);
  const { fromRoot, toRoot, proof } = await missing(
    withStoredNodes(db, orgId, (nodes) => ({ fromRoot: rootAt(from, nodes), toRoot: rootAt(to, nodes), proof: consistencyProof(from, to, nodes) })),
  );
  const [fc, tc] = await Promise.all([checkpointOfSize(db, orgId, from), checkpointOfSize(db, orgId, to)]);
  for (const [c, r] of [[fc, fromRoot], [tc, toRoot]] as const) {
    if (c && !signedRoot(c, verifiers).equals(r)) throw new LogMismatch(`the log's stored hashes do not match its signed checkpoint of size ${c.size}`, null);
  }
  if (!verifyConsistency(from, to, fromRoot, toRoot, proof)) throw new LogMismatch(`the consistency proof from ${from} to ${to} does not verify`, null);
  return { from, to, fromRoot: b64(fromRoot), toRoot: b64(toRoot), proof: proof.map(b64), fromCheckpoint: fc?.note ?? null, toCheckpoint: tc?.note ?? null };
}
