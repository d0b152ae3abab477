// RFC 9162 Merkle trees over SHA-256: leaf and node hashes, roots, inclusion and consistency proofs (built from any
// source of perfect-subtree hashes) and their verification. Sizes and indexes are plain numbers (exact below 2^53).
import { createHash, hash } from 'node:crypto';

export const HASH_SIZE = 32;

/** RFC 9162 2.1.1: SHA-256(0x00 || data). */
export function leafHash(data: Uint8Array | string): Buffer {
  // One-shot (no Hash object): U+0000 is the byte 0x00 in UTF-8.
  if (typeof data === 'string') return hash('sha256', `\u0000${data}`, 'buffer');
  return createHash('sha256').update(Buffer.of(0)).update(data).digest();
}

/** RFC 9162 2.1.1: SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  const input = Buffer.allocUnsafe(1 + left.length + right.length);
  input[0] = 1;
  input.set(left, 1);
  input.set(right, 1 + left.length);
  return hash('sha256', input, 'buffer');
}

/** The root of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT = createHash('sha256').digest();

/** The largest power of two strictly below n (n >= 2): where RFC 9162 splits a range of n leaves. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** True when n is a power of two (1, 2, 4, ...). */
export function isPowerOfTwo(n: number): boolean {
  return n >= 1 && Number.isInteger(Math.log2(n)) && 2 ** Math.log2(n) === n;
}

/**
 * Hashes of perfect subtrees: `get(height, index)` is the root over leaves [index * 2^height, (index + 1) * 2^height).
 * Throws when it does not hold the hash.
 */
export interface NodeHashes {
  get(height: number, index: number): Buffer;
}

/** A perfect subtree named by its height and index. */
export interface NodeRef {
  height: number;
  index: number;
}

/** The root over leaves [lo, hi) of a range RFC 9162's recursion produces (its left parts are perfect and aligned). */
export function rangeHash(lo: number, hi: number, nodes: NodeHashes): Buffer {
  const n = hi - lo;
  if (n <= 0) throw new RangeError('empty range');
  if (isPowerOfTwo(n) && lo % n === 0) return nodes.get(Math.log2(n), lo / n);
  const k = splitPoint(n);
  return nodeHash(rangeHash(lo, lo + k, nodes), rangeHash(lo + k, hi, nodes));
}

/** The tree hash of the first `size` leaves. */
export function rootAt(size: number, nodes: NodeHashes): Buffer {
  return size === 0 ? EMPTY_ROOT : rangeHash(0, size, nodes);
}

/** RFC 9162 2.1.3.1: the inclusion proof of leaf `index` in the tree of `size` leaves, bottom-up. */
export function inclusionProof(index: number, size: number, nodes: NodeHashes): Buffer[] {
  if (!(index >= 0 && index < size)) throw new RangeError('leaf index outside the tree');
  const path = (lo: number, hi: number): Buffer[] => {
    const n = hi - lo;
    if (n === 1) return [];
    const k = splitPoint(n);
    return index - lo < k ? [...path(lo, lo + k), rangeHash(lo + k, hi, nodes)] : [...path(lo + k, hi), rangeHash(lo, lo + k, nodes)];
  };
  return path(0, size);
}

/** RFC 9162 2.1.4.1: the consistency proof from the tree of `from` leaves to that of `to` leaves (0 < from <= to). */
export function consistencyProof(from: number, to: number, nodes: NodeHashes): Buffer[] {
  if (!(from > 0 && from <= to)) throw new RangeError('a consistency proof needs 0 < from <= to');
  const sub = (m: number, lo: number, hi: number, whole: boolean): Buffer[] => {
    const n = hi - lo;
    if (m === n) return whole ? [] : [rangeHash(lo, hi, nodes)];
    const k = splitPoint(n);
    return m <= k ? [...sub(m, lo, lo + k, whole), rangeHash(lo + k, hi, nodes)] : [...sub(m - k, lo + k, hi, false), rangeHash(lo, lo + k, nodes)];
  };
  return sub(from, 0, to, true);
}

/**
 * The perfect subtrees a computation over `nodes` reads, found by running it against a recorder (every hash zero):
 * what to fetch before running it for real.
 */
export function nodesRead(run: (nodes: NodeHashes) => unknown): NodeRef[] {
  const seen = new Map<string, NodeRef>();
  const zero = Buffer.alloc(HASH_SIZE);
  run({
    get(height, index) {
      seen.set(`${height}/${index}`, { height, index });
      return zero;
    },
  });
  return [...seen.values()];
}

const odd = (n: number) => n % 2 === 1;
const half = (n: number) => Math.floor(n / 2);

/** RFC 9162 2.1.3.2: the root an inclusion proof of `leaf` at `index` in a tree of `size` leaves implies, or null when the proof is malformed. */
export function rootFromInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[]): Buffer | null {
  if (!(index >= 0 && index < size)) return null;
  let fn = index;
  let sn = size - 1;
  let r: Buffer = Buffer.from(leaf);
  for (const p of proof) {
    if (sn === 0) return null;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else r = nodeHash(r, p);
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? r : null;
}

export function verifyInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  const r = rootFromInclusion(index, size, leaf, proof);
  return r !== null && r.equals(root);
}

/** RFC 9162 2.1.4.2: whether `proof` shows the tree of `from` leaves with `fromRoot` is a prefix of the tree of `to` leaves with `toRoot`. */
export function verifyConsistency(from: number, to: number, fromRoot: Uint8Array, toRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  if (from === to) return proof.length === 0 && Buffer.from(fromRoot).equals(toRoot);
  if (!(from > 0 && from < to) || proof.length === 0) return false;
  const path = isPowerOfTwo(from) ? [fromRoot, ...proof] : [...proof];
  let fn = from - 1;
  let sn = to - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr: Buffer = Buffer.from(path[0]);
  let sr: Buffer = Buffer.from(path[0]);
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else sr = nodeHash(sr, c);
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && fr.equals(fromRoot) && sr.equals(toRoot);
}

/** The perfect subtree hashes of a list of leaf hashes held in memory (tests, the verifier's own leaves). */
export function memoryNodes(leaves: readonly Buffer[]): NodeHashes {
  const levels: Buffer[][] = [leaves.slice()];
  return {
    get(height, index) {
      while (levels.length <= height) {
        const below = levels[levels.length - 1];
        const up: Buffer[] = [];
        for (let i = 0; i + 1 < below.length; i += 2) up.push(nodeHash(below[i], below[i + 1]));
        levels.push(up);
      }
      const h = levels[height][index];
      if (!h) throw new RangeError(`no hash at height ${height}, index ${index}`);
      return h;
    },
  };
}
