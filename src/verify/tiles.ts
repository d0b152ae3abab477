// C2SP tlog-tiles geometry: tiles of height 8 (256 hashes), where a perfect subtree's hash is found in them, and the
// tile paths (`tile/<L>/<N>[.p/<W>]`, N in three-digit groups with an `x` before every group but the last).
import { HASH_SIZE, nodeHash, type NodeRef } from './tree.js';

export const TILE_HEIGHT = 8;
export const TILE_WIDTH = 2 ** TILE_HEIGHT;

/** A tile: level L holds the hashes of perfect subtrees of height 8L, indexes N*256 up to N*256+width-1. */
export interface TileRef {
  level: number;
  index: number;
}

/** Where a perfect subtree's hash comes from: the tile, and the run of its hashes whose root it is. */
export interface NodeInTile {
  tile: TileRef;
  /** First position in the tile and how many hashes (a power of two up to 128, aligned). */
  start: number;
  count: number;
}

export function locateNode(node: NodeRef): NodeInTile {
  const level = Math.floor(node.height / TILE_HEIGHT);
  const count = 2 ** (node.height - level * TILE_HEIGHT);
  const first = node.index * count;
  return { tile: { level, index: Math.floor(first / TILE_WIDTH) }, start: first % TILE_WIDTH, count };
}

/** The root over a perfect run of hashes (its length a power of two). */
export function perfectRoot(hashes: readonly Buffer[]): Buffer {
  let layer = hashes.slice();
  while (layer.length > 1) {
    const up: Buffer[] = [];
    for (let i = 0; i < layer.length; i += 2) up.push(nodeHash(layer[i], layer[i + 1]));
    layer = up;
  }
  return layer[0];
}

/** The hash of `node` from the data of its tile (concatenated hashes), or null when the tile is too narrow. */
export function nodeFromTile(node: NodeRef, data: Buffer): Buffer | null {
  const { start, count } = locateNode(node);
  if (data.length < (start + count) * HASH_SIZE) return null;
  const run: Buffer[] = [];
  for (let i = start; i < start + count; i++) run.push(data.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE));
  return perfectRoot(run);
}

/** The C2SP encoding of a tile index: "x001/x234/067" for 1234067. */
export function encodeTileIndex(n: number): string {
  let s = String(n % 1000).padStart(3, '0');
  for (let rest = Math.floor(n / 1000); rest > 0; rest = Math.floor(rest / 1000)) s = `x${String(rest % 1000).padStart(3, '0')}/${s}`;
  return s;
}

/** The path of a tile below the log's prefix: `tile/<L>/<N>` when full, `tile/<L>/<N>.p/<W>` for its first W hashes. */
export function tilePath(tile: TileRef, width = TILE_WIDTH): string {
  return `tile/${tile.level}/${encodeTileIndex(tile.index)}${width < TILE_WIDTH ? `.p/${width}` : ''}`;
}

/** Parses `<L>/<N>[.p/<W>]` (the part after `tile/`); null when it is not a well-formed tile path. */
export function parseTilePath(rest: string): { tile: TileRef; width: number } | null {
  const m = /^(\d{1,2})\/((?:x\d{3}\/){0,5}\d{3})(?:\.p\/(\d{1,3}))?$/.exec(rest);
  if (!m) return null;
  const level = Number(m[1]);
  const index = m[2].split('/').reduce((acc, g) => acc * 1000 + Number(g.replace('x', '')), 0);
  const width = m[3] === undefined ? TILE_WIDTH : Number(m[3]);
  if (level > 6 || width < 1 || (m[3] !== undefined && width >= TILE_WIDTH)) return null;
  if (m[3] !== undefined && String(width) !== m[3]) return null;
  if (m[2] !== encodeTileIndex(index)) return null;
  return { tile: { level, index }, width };
}

/** The width of a tile in a tree of `size` leaves (0: it does not exist yet). */
export function tileWidthAt(tile: TileRef, size: number): number {
  const below = Math.floor(size / TILE_WIDTH ** tile.level);
  return Math.max(0, Math.min(TILE_WIDTH, below - tile.index * TILE_WIDTH));
}
