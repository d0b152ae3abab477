// Where the offline verifier reads a log's tiles: a directory in the C2SP tlog-tiles layout, or the service's API
// (`<url>/tile/<L>/<N>[.p/<W>]` with an API key). Tiles are asked at the width the checkpoint's size gives them.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { tileKey } from './merkle-sql.js';
import { TileSourceError, type TileFetcher } from './export-check.js';
import { tilePath, tileWidthAt, TILE_WIDTH } from './tiles.js';
import { HASH_SIZE } from './tree.js';

/** Largest tile answer taken (a full tile is 8 KiB). */
const MAX_TILE_BYTES = TILE_WIDTH * HASH_SIZE;

/** Tiles from a directory (`<dir>/tile/...`); a partial tile may also be read from a wider one's file. */
export function directoryTiles(dir: string): TileFetcher {
  return async (tiles, size) => {
    const out = new Map<string, Buffer>();
    for (const t of tiles) {
      const width = tileWidthAt(t, size);
      if (width === 0) continue;
      for (const w of width === TILE_WIDTH ? [TILE_WIDTH] : [width, TILE_WIDTH]) {
        const data = await readFile(path.join(dir, tilePath(t, w))).catch(() => null);
        if (data && data.length >= width * HASH_SIZE) {
          out.set(tileKey(t), data.subarray(0, width * HASH_SIZE));
          break;
        }
      }
    }
    return out;
  };
}

/** Tiles from the API under `base` (e.g. https://host/api/v1/log), with `apiKey` as a bearer token. */
export function httpTiles(base: string, apiKey: string | undefined): TileFetcher {
  const root = base.replace(/\/+$/, '');
  return async (tiles, size) => {
    const out = new Map<string, Buffer>();
    await Promise.all(
      tiles.map(async (t) => {
        const width = tileWidthAt(t, size);
        if (width === 0) return;
        let res: Response;
        try {
          res = await fetch(`${root}/${tilePath(t, width)}`, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
        } catch (err) {
          throw new TileSourceError(`cannot read tiles from ${root}: ${(err as Error).message}`);
        }
        if (res.status === 404) return;
        if (!res.ok) throw new TileSourceError(`reading tile ${tilePath(t, width)} answered ${res.status}`);
        const data = Buffer.from(await res.arrayBuffer());
        if (data.length > MAX_TILE_BYTES) throw new TileSourceError(`tile ${tilePath(t, width)} is larger than a tile`);
        if (data.length === width * HASH_SIZE) out.set(tileKey(t), data);
      }),
    );
    return out;
  };
}
