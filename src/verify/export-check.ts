// The offline verifier's core: proves an NDJSON export is exactly leaves a..b of a log at a signed checkpoint, using
// the log's tiles for the rest of the tree, or names the first seq that differs (a changed, missing, added or moved
// event), descending the tree from the signed root.
import canonicalize from 'canonicalize';
import { parseCheckpointText, type Checkpoint } from './checkpoint.js';
import { tileKey } from './merkle-sql.js';
import { openNote, type NoteVerifier } from './signed-note.js';
import { withTileNodes } from './stored-nodes.js';
import type { TileRef } from './tiles.js';
import { leafHash, nodeHash, rangeHash, rootAt, splitPoint, type NodeHashes } from './tree.js';

/** Exit codes of `audit-stream verify` (docs/verification.md). */
export const EXIT = {
  verified: 0,
  /** The export differs from the log: an event changed, missing, added or out of place (firstBadSeq names it). */
  differs: 1,
  /** Bad usage or unreadable input (a file, a line that is not JSON, a tile source that cannot be reached). */
  usage: 2,
  /** The checkpoint is malformed or no given verifier key signed it. */
  badCheckpoint: 3,
  /** The tiles do not match the signed checkpoint (or lack hashes the proof needs). */
  badTiles: 4,
} as const;

export interface CheckResult {
  exitCode: (typeof EXIT)[keyof typeof EXIT];
  message: string;
  firstBadSeq: number | null;
  checkpoint: { origin: string; size: number } | null;
  /** The seqs proven (when verified). */
  verified: { from: number; to: number } | null;
}

/** Fetches tiles of the log (full or partial, at the checkpoint's size): stored tiles, a directory, or the API. */
export type TileFetcher = (tiles: TileRef[], treeSize: number) => Promise<Map<string, Buffer>>;

export class InputError extends Error {}
export class TileSourceError extends Error {}

/** Leaf hashes kept 32 bytes each, in chunks (a Buffer object per leaf would take several times that). */
export class LeafList {
  private static readonly PER_CHUNK = 32_768;
  private readonly chunks: Buffer[] = [];
  length = 0;

  push(hash: Buffer): void {
    const at = this.length % LeafList.PER_CHUNK;
    if (at === 0) this.chunks.push(Buffer.alloc(LeafList.PER_CHUNK * 32));
    hash.copy(this.chunks[this.chunks.length - 1], at * 32);
    this.length++;
  }

  at(i: number): Buffer {
    const chunk = this.chunks[Math.floor(i / LeafList.PER_CHUNK)];
    const at = (i % LeafList.PER_CHUNK) * 32;
    return chunk.subarray(at, at + 32);
  }
}

/** The export's leaves: seqs from `first` on, consecutive up to `gapAt` (the first seq missing or out of place), if any. */
export interface ExportLeaves {
  first: number;
  leaves: LeafList;
  /** The first seq where the export stops being consecutive (an event missing, or one repeated or out of order). */
  gapAt: number | null;
}

/** Reads export lines (one JSON event each, as GET /api/v1/audit-events/export writes them) into leaf hashes. */
export async function exportLeaves(lines: AsyncIterable<string>): Promise<ExportLeaves> {
  let first = 0;
  const leaves = new LeafList();
  let gapAt: number | null = null;
  let n = 0;
  for await (const line of lines) {
    n++;
    if (line.trim() === '') continue;
    let event: { seq?: unknown };
    try {
      event = JSON.parse(line) as { seq?: unknown };
    } catch {
      throw new InputError(`line ${n} of the export is not JSON`);
    }
    const seq = event?.seq;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 1) throw new InputError(`line ${n} of the export has no seq`);
    if (gapAt !== null) continue;
    if (leaves.length === 0) first = seq;
    const expected = first + leaves.length;
    if (seq !== expected) {
      gapAt = expected;
      continue;
    }
    leaves.push(leafHash(Buffer.from(canonicalize(event)!, 'utf8')));
  }
  return { first, leaves, gapAt };
}

/**
 * Verifies `exported` against `note` (signed by one of `verifiers`), with `fetchTiles` for the hashes outside the
 * export (none needed when the export is the whole tree). Events past the checkpoint's size are not covered.
 */
export async function checkExport(exported: ExportLeaves, note: string, verifiers: readonly NoteVerifier[], fetchTiles: TileFetcher | null): Promise<CheckResult> {
  let cp: Checkpoint;
  try {
    cp = parseCheckpointText(openNote(note, verifiers).text);
  } catch (err) {
    return { exitCode: EXIT.badCheckpoint, message: `the checkpoint does not verify: ${(err as Error).message}`, firstBadSeq: null, checkpoint: null, verified: null };
  }
  const checkpoint = { origin: cp.origin, size: cp.size };
  const result = (exitCode: CheckResult['exitCode'], message: string, firstBadSeq: number | null = null, verified: CheckResult['verified'] = null): CheckResult => ({
    exitCode,
    message,
    firstBadSeq,
    checkpoint,
    verified,
  });
  if (exported.leaves.length === 0) return result(EXIT.differs, 'the export holds no events', null);
  if (exported.first > cp.size) return result(EXIT.differs, `the export starts at seq ${exported.first}, past the checkpoint's ${cp.size} leaves`, exported.first);
  // Leaf indexes [lo, hi) are the export's, within the checkpoint.
  const lo = exported.first - 1;
  const hi = Math.min(lo + exported.leaves.length, cp.size);
  const gap = exported.gapAt !== null && exported.gapAt <= cp.size ? exported.gapAt : null;
  const mine = (i: number) => exported.leaves.at(i - lo);
  const inside = (a: number, b: number) => a >= lo && b <= hi;
  const outside = (a: number, b: number) => b <= lo || a >= hi;

  /** The hash of [a, b): the export's leaves inside, `nodes` (the tiles) outside. */
  function mixed(a: number, b: number, nodes: NodeHashes): Buffer {
    if (outside(a, b)) return rangeHash(a, b, nodes);
    if (b - a === 1) return mine(a);
    const k = splitPoint(b - a);
    return nodeHash(mixed(a, a + k, nodes), mixed(a + k, b, nodes));
  }
  /** The ranges of the tree outside the export: the only hashes the tiles must give for the root. */
  function outsideRanges(a: number, b: number, out: [number, number][]): [number, number][] {
    if (outside(a, b)) out.push([a, b]);
    else if (!inside(a, b)) {
      const k = splitPoint(b - a);
      outsideRanges(a, a + k, out);
      outsideRanges(a + k, b, out);
    }
    return out;
  }

  const cache = new Map<string, Buffer>();
  const tiles = async (refs: TileRef[]) => {
    const want = refs.filter((t) => !cache.has(tileKey(t)));
    if (want.length && !fetchTiles) throw new TileSourceError('the export is not the whole tree: give the log\'s tiles (--tiles) for the rest');
    if (want.length) for (const [k, v] of await fetchTiles!(want, cp.size)) cache.set(k, v);
    return cache;
  };
  const outsides = outsideRanges(0, cp.size, []);
  let root: Buffer;
  try {
    const provided = await withTileNodes(tiles, (nodes) => new Map(outsides.map(([a, b]) => [`${a}/${b}`, rangeHash(a, b, nodes)])));
    root = mixedWith(provided);
  } catch (err) {
    if (err instanceof TileSourceError) return result(EXIT.usage, err.message);
    return result(EXIT.badTiles, `the tiles lack hashes the proof needs: ${(err as Error).message}`);
  }
  function mixedWith(provided: Map<string, Buffer>): Buffer {
    const walk = (a: number, b: number): Buffer => {
      if (outside(a, b)) return provided.get(`${a}/${b}`)!;
      if (b - a === 1) return mine(a);
      const k = splitPoint(b - a);
      return nodeHash(walk(a, a + k), walk(a + k, b));
    };
    return walk(0, cp.size);
  }
  const covered = { from: lo + 1, to: hi };
  const past = lo + exported.leaves.length > cp.size ? `; its events after seq ${cp.size} are past the checkpoint and not covered` : '';
  if (root.equals(cp.root)) {
    if (gap !== null) return result(EXIT.differs, `seq ${gap} is missing from the export (or out of place); seqs ${lo + 1} to ${gap - 1} match the log`, gap);
    return result(EXIT.verified, `seqs ${lo + 1} to ${hi} are exactly the log's leaves at ${cp.origin}, size ${cp.size}${past}`, null, covered);
  }
  if (!fetchTiles) return result(EXIT.differs, 'the export differs from the log; give its tiles (--tiles) to name the first seq that differs');
  // Descend from the signed root: at each node, the tiles' hashes of its children must make the hash above them.
  const provided = (a: number, b: number) => withTileNodes(tiles, (nodes) => rangeHash(a, b, nodes));
  try {
    if (!(await provided(0, cp.size)).equals(cp.root)) return result(EXIT.badTiles, `the tiles do not match the signed checkpoint of size ${cp.size}`);
    let a = 0;
    let b = cp.size;
    while (b - a > 1) {
      const k = splitPoint(b - a);
      const [left, right] = await Promise.all([provided(a, a + k), provided(a + k, b)]);
      const above = await provided(a, b);
      if (!nodeHash(left, right).equals(above)) return result(EXIT.badTiles, `the tiles are not consistent over leaves ${a + 1} to ${b}`);
      const leftMine = outside(a, a + k) ? left : await withTileNodes(tiles, (nodes) => mixed(a, a + k, nodes));
      if (!leftMine.equals(left)) b = a + k;
      else a += k;
    }
    if (a >= lo && a < hi && !mine(a).equals(await provided(a, a + 1))) {
      return result(EXIT.differs, `seq ${a + 1} differs from the log's leaf ${a} (changed, added or moved)`, a + 1);
    }
    return result(EXIT.badTiles, `the export differs from the log near seq ${a + 1}, but the tiles do not say which event`, a + 1);
  } catch (err) {
    if (err instanceof TileSourceError) return result(EXIT.usage, err.message);
    return result(EXIT.badTiles, `the tiles lack hashes needed to find the first differing seq: ${(err as Error).message}`);
  }
}

/** The tree hash of `size` leaves from tiles alone. */
export function tilesRoot(size: number, fetchTiles: TileFetcher): Promise<Buffer> {
  return withTileNodes((t) => fetchTiles(t, size), (nodes) => rootAt(size, nodes));
}
