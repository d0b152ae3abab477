// Perfect-subtree hashes read from an organization's stored tiles: a computation over them (a root, a proof) is run
// once to learn which hashes it needs, their tiles are read in one query, and it is run again over them.
import type { Queryable } from '../db/db.js';
import { readTiles, tileKey } from './merkle-sql.js';
import { locateNode, nodeFromTile, type TileRef } from './tiles.js';
import { nodesRead, type NodeHashes } from './tree.js';

/** A hash the stored tiles do not hold (a tile removed with the events retention removed, or never written). */
export class MissingHashes extends Error {}

/** Runs `compute` over hashes fetched by `fetchTiles` (stored tiles, or a verifier's tile source). */
export async function withTileNodes<T>(fetchTiles: (tiles: TileRef[]) => Promise<Map<string, Buffer>>, compute: (nodes: NodeHashes) => T): Promise<T> {
  const tiles = new Map<string, TileRef>();
  for (const ref of nodesRead(compute)) {
    const t = locateNode(ref).tile;
    tiles.set(tileKey(t), t);
  }
  const data = await fetchTiles([...tiles.values()]);
  return compute({
    get(height, index) {
      const loc = locateNode({ height, index });
      const tile = data.get(tileKey(loc.tile));
      const h = tile && nodeFromTile({ height, index }, tile);
      if (!h) throw new MissingHashes(`the log holds no hash for leaves ${index * 2 ** height + 1} to ${(index + 1) * 2 ** height} (tile ${loc.tile.level}/${loc.tile.index})`);
      return h;
    },
  });
}

/** Runs `compute` over the organization's stored tiles. */
export function withStoredNodes<T>(db: Queryable, orgId: string, compute: (nodes: NodeHashes) => T): Promise<T> {
  return withTileNodes((tiles) => readTiles(db, orgId, tiles), compute);
}
