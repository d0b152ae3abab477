// The verifiable log's SQL: its size, its tiles (read, and grown at their ends in the append transaction: full ones packed
// to fill pages, partial ones as the parts appends added), its signed checkpoints and published verifier keys.
import type { Queryable } from '../db/db.js';
import { HASH_SIZE } from './tree.js';
import { TILE_WIDTH, type TileRef } from './tiles.js';

export const tileKey = (t: TileRef) => `${t.level}/${t.index}`;

/** The stored tiles among `tiles` (missing ones absent), keyed by tileKey: full ones, and partial ones from their parts. */
export async function readTiles(db: Queryable, orgId: string, tiles: readonly TileRef[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (tiles.length === 0) return out;
  const r = await db.query<{ level: number; idx: number | string; hashes: Buffer | Uint8Array }>(
    `WITH w AS (SELECT * FROM unnest($2::smallint[], $3::bigint[]) AS w(level, idx))
     SELECT t.level, t.idx, t.head || t.tail AS hashes FROM merkle_tiles t JOIN w ON t.level = w.level AND t.idx = w.idx WHERE t.org_id = $1
     UNION ALL
     SELECT p.level, p.idx, string_agg(p.hashes, ''::bytea ORDER BY p.width) FROM merkle_tile_parts p JOIN w ON p.level = w.level AND p.idx = w.idx
     WHERE p.org_id = $1 GROUP BY p.level, p.idx`,
    [orgId, tiles.map((t) => t.level), tiles.map((t) => t.index)],
  );
  for (const row of r.rows) out.set(tileKey({ level: Number(row.level), index: Number(row.idx) }), Buffer.from(row.hashes));
  return out;
}

/** Hashes added at the end of one tile: at `at` (its width before). */
export interface TileGrowth {
  level: number;
  index: number;
  at: number;
  hashes: Buffer;
}

/**
 * A full tile is stored as its first FULL_TILE_HEAD bytes out of line (exactly four TOAST chunks of 1,996 bytes: one
 * page) and its last 208 bytes in its row (migration 051); a partial one as the parts each append added.
 */
export const FULL_TILE_HEAD = 4 * 1996;
const FULL_TILE_BYTES = TILE_WIDTH * HASH_SIZE;

/**
 * In one statement: moves the log's size from `from` to `to` and grows its tiles, only when its size is `from` (an
 * organization without a log row starts at 0). A growth that fills its tile writes the full tile (its parts before,
 * then its new hashes) and removes those parts; another adds a part. Returns whether the size moved, and how many
 * growths were written: each only onto a tile of exactly `at` hashes (not full; its last part ends there, none after).
 */
export async function growLog(tx: Queryable, orgId: string, from: number, to: number, growths: readonly TileGrowth[]): Promise<{ moved: boolean; tiles: number }> {
  const r = await tx.query<{ moved: number; tiles: number }>(
    `WITH u AS (
       UPDATE merkle_logs SET size = $3 WHERE org_id = $1 AND size = $2 RETURNING 1
     ), i AS (
       INSERT INTO merkle_logs (org_id, size) SELECT $1, $3 WHERE $2::bigint = 0 AND NOT EXISTS (SELECT 1 FROM merkle_logs WHERE org_id = $1)
       ON CONFLICT (org_id) DO NOTHING RETURNING 1
     ), m AS (
       SELECT 1 AS ok FROM u UNION ALL SELECT 1 FROM i
     ), x AS (
       SELECT g.level, g.idx, g.at, h, g.at + octet_length(h) / ${HASH_SIZE} AS width, g.at * ${HASH_SIZE} + octet_length(h) = ${FULL_TILE_BYTES} AS fills
       FROM unnest($4::smallint[], $5::bigint[], $6::int[], $7::text[]) AS g(level, idx, at, hex), decode(g.hex, 'hex') AS h
       WHERE EXISTS (SELECT 1 FROM m)
         AND (g.at = 0 OR EXISTS (SELECT 1 FROM merkle_tile_parts p WHERE p.org_id = $1 AND p.level = g.level AND p.idx = g.idx AND p.width = g.at))
         AND NOT EXISTS (SELECT 1 FROM merkle_tile_parts p WHERE p.org_id = $1 AND p.level = g.level AND p.idx = g.idx AND p.width > g.at)
         AND NOT EXISTS (SELECT 1 FROM merkle_tiles t WHERE t.org_id = $1 AND t.level = g.level AND t.idx = g.idx)
     ), f AS (
       SELECT x.level, x.idx, x.at, coalesce((SELECT string_agg(p.hashes, ''::bytea ORDER BY p.width) FROM merkle_tile_parts p WHERE p.org_id = $1 AND p.level = x.level AND p.idx = x.idx), ''::bytea) || x.h AS hashes
       FROM x WHERE x.fills
     ), fi AS (
       INSERT INTO merkle_tiles (org_id, level, idx, head, tail)
       SELECT $1, level, idx, substring(hashes FROM 1 FOR ${FULL_TILE_HEAD}), substring(hashes FROM ${FULL_TILE_HEAD + 1}) FROM f
       WHERE octet_length(hashes) = ${FULL_TILE_BYTES}
       RETURNING 1
     ), pd AS (
       DELETE FROM merkle_tile_parts p USING f WHERE f.at > 0 AND p.org_id = $1 AND p.level = f.level AND p.idx = f.idx RETURNING 1
     ), pi AS (
       INSERT INTO merkle_tile_parts (org_id, level, idx, width, hashes) SELECT $1, level, idx, width, h FROM x WHERE NOT fills RETURNING 1
     )
     SELECT (SELECT count(*) FROM m)::int AS moved, ((SELECT count(*) FROM fi) + (SELECT count(*) FROM pi))::int AS tiles`,
    [orgId, from, to, growths.map((g) => g.level), growths.map((g) => g.index), growths.map((g) => g.at), growths.map((g) => g.hashes.toString('hex'))],
  );
  return { moved: Number(r.rows[0].moved) > 0, tiles: Number(r.rows[0].tiles) };
}

/** The log's size (leaves), or null when the organization has no log row yet. */
export async function logSize(db: Queryable, orgId: string): Promise<number | null> {
  const r = await db.query<{ size: number | string }>('SELECT size FROM merkle_logs WHERE org_id = $1', [orgId]);
  return r.rows.length ? Number(r.rows[0].size) : null;
}

export async function createLogRow(tx: Queryable, orgId: string): Promise<void> {
  await tx.query('INSERT INTO merkle_logs (org_id, size) VALUES ($1, 0) ON CONFLICT (org_id) DO NOTHING', [orgId]);
}

export interface StoredCheckpoint {
  size: number;
  root: Buffer;
  note: string;
  issuedAt: Date;
}

const checkpointOf = (r: { size: number | string; root: Buffer | Uint8Array; note: string; issued_at: Date | string }): StoredCheckpoint => ({
  size: Number(r.size),
  root: Buffer.from(r.root),
  note: r.note,
  issuedAt: new Date(r.issued_at),
});

/** The organization's checkpoint of the largest size, or null. */
export async function latestCheckpoint(db: Queryable, orgId: string): Promise<StoredCheckpoint | null> {
  const r = await db.query<{ size: number; root: Buffer; note: string; issued_at: Date }>(
    'SELECT size, root, note, issued_at FROM merkle_checkpoints WHERE org_id = $1 ORDER BY size DESC LIMIT 1',
    [orgId],
  );
  return r.rows.length ? checkpointOf(r.rows[0]) : null;
}

/** The organization's first checkpoint of at least `size` leaves, or null. */
export async function checkpointAtLeast(db: Queryable, orgId: string, size: number): Promise<StoredCheckpoint | null> {
  const r = await db.query<{ size: number; root: Buffer; note: string; issued_at: Date }>(
    'SELECT size, root, note, issued_at FROM merkle_checkpoints WHERE org_id = $1 AND size >= $2 ORDER BY size LIMIT 1',
    [orgId, size],
  );
  return r.rows.length ? checkpointOf(r.rows[0]) : null;
}

/** The organization's checkpoint of exactly `size` leaves, or null. */
export async function checkpointOfSize(db: Queryable, orgId: string, size: number): Promise<StoredCheckpoint | null> {
  const r = await db.query<{ size: number; root: Buffer; note: string; issued_at: Date }>(
    'SELECT size, root, note, issued_at FROM merkle_checkpoints WHERE org_id = $1 AND size = $2',
    [orgId, size],
  );
  return r.rows.length ? checkpointOf(r.rows[0]) : null;
}

/** Stores a checkpoint; false when one of that size is stored already (it is never replaced). */
export async function insertCheckpoint(tx: Queryable, orgId: string, c: { size: number; root: Buffer; note: string }): Promise<boolean> {
  const r = await tx.query('INSERT INTO merkle_checkpoints (org_id, size, root, note) VALUES ($1, $2, decode($3, \'hex\'), $4) ON CONFLICT (org_id, size) DO NOTHING', [
    orgId,
    c.size,
    c.root.toString('hex'),
    c.note,
  ]);
  return r.rowCount === 1;
}

/** Publishes a verifier key (kept when the signing key is rotated). */
export async function publishVerifierKey(db: Queryable, verifierKey: string): Promise<void> {
  await db.query('INSERT INTO merkle_verifier_keys (verifier_key) VALUES ($1) ON CONFLICT (verifier_key) DO NOTHING', [verifierKey]);
}

export async function verifierKeys(db: Queryable): Promise<{ verifierKey: string; firstUsedAt: Date }[]> {
  const r = await db.query<{ verifier_key: string; first_used_at: Date | string }>('SELECT verifier_key, first_used_at FROM merkle_verifier_keys ORDER BY first_used_at, verifier_key');
  return r.rows.map((x) => ({ verifierKey: x.verifier_key, firstUsedAt: new Date(x.first_used_at) }));
}

/**
 * After retention removed every event below seq `removedBelow`: removes the leaf tiles (level 0) all of whose events
 * are gone, except those a consistency proof from a checkpoint needs (the tile holding a checkpoint's right edge). The
 * tiles above level 0 stay: with them, proofs of kept events and between checkpoints stay whole. Returns how many.
 * Only full tiles go: a partial one is the log's last tile, never below the cut (idx < floor((removedBelow - 1) / 256)).
 */
export async function pruneLeafTiles(db: Queryable, orgId: string, removedBelow: number): Promise<number> {
  const r = await db.query(
    `DELETE FROM merkle_tiles t WHERE t.org_id = $1 AND t.level = 0 AND t.idx < floor(($2::bigint - 1) / 256)
     AND NOT EXISTS (SELECT 1 FROM merkle_checkpoints c WHERE c.org_id = $1 AND c.size % 256 <> 0 AND c.size / 256 = t.idx)`,
    [orgId, removedBelow],
  );
  return r.rowCount;
}
