// The verifiable log's SQL: its size, its tiles (read, and grown at their ends in the append transaction: full ones packed
// to fill pages, partial ones apart), its signed checkpoints and published verifier keys.
import type { Queryable } from '../db/db.js';
import { HASH_SIZE } from './tree.js';
import { TILE_WIDTH, type TileRef } from './tiles.js';

export const tileKey = (t: TileRef) => `${t.level}/${t.index}`;

/** The stored tiles among `tiles` (missing ones absent), keyed by tileKey: full ones and partial ones alike. */
export async function readTiles(db: Queryable, orgId: string, tiles: readonly TileRef[]): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (tiles.length === 0) return out;
  const r = await db.query<{ level: number; idx: number | string; hashes: Buffer | Uint8Array }>(
    `SELECT t.level, t.idx, t.hashes FROM merkle_tile_hashes t
     JOIN unnest($2::smallint[], $3::bigint[]) AS w(level, idx) ON t.level = w.level AND t.idx = w.idx
     WHERE t.org_id = $1`,
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
 * page) and its last 208 bytes in its row (migration 051); a partial one whole, in merkle_partial_tiles.
 */
export const FULL_TILE_HEAD = 4 * 1996;
const FULL_TILE_BYTES = TILE_WIDTH * HASH_SIZE;

/**
 * In one statement: moves the log's size from `from` to `to` and grows its tiles, only when its size is `from` (an
 * organization without a log row starts at 0). A growth that fills its tile writes the full tile (and removes the
 * partial one it continues); another inserts or extends the partial tile. Returns whether the size moved, and how
 * many growths were written (each only onto a tile of exactly `at` hashes).
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
       SELECT level, idx, at, h, at * ${HASH_SIZE} + octet_length(h) = ${FULL_TILE_BYTES} AS fills
       FROM unnest($4::smallint[], $5::bigint[], $6::int[], $7::text[]) AS g(level, idx, at, hex), decode(g.hex, 'hex') AS h
       WHERE EXISTS (SELECT 1 FROM m)
     ), p AS (
       SELECT x.level, x.idx, x.fills, q.hashes || x.h AS hashes FROM x
       JOIN merkle_partial_tiles q ON q.org_id = $1 AND q.level = x.level AND q.idx = x.idx AND octet_length(q.hashes) = x.at * ${HASH_SIZE}
       WHERE x.at > 0
     ), f AS (
       SELECT level, idx, h AS hashes FROM x WHERE at = 0 AND fills
         AND NOT EXISTS (SELECT 1 FROM merkle_partial_tiles q WHERE q.org_id = $1 AND q.level = x.level AND q.idx = x.idx)
       UNION ALL SELECT level, idx, hashes FROM p WHERE fills
     ), fi AS (
       INSERT INTO merkle_tiles (org_id, level, idx, head, tail)
       SELECT $1, level, idx, substring(hashes FROM 1 FOR ${FULL_TILE_HEAD}), substring(hashes FROM ${FULL_TILE_HEAD + 1}) FROM f
       RETURNING 1
     ), pd AS (
       DELETE FROM merkle_partial_tiles q USING p WHERE p.fills AND q.org_id = $1 AND q.level = p.level AND q.idx = p.idx RETURNING 1
     ), pu AS (
       UPDATE merkle_partial_tiles q SET hashes = p.hashes FROM p WHERE NOT p.fills AND q.org_id = $1 AND q.level = p.level AND q.idx = p.idx RETURNING 1
     ), pi AS (
       INSERT INTO merkle_partial_tiles (org_id, level, idx, hashes) SELECT $1, level, idx, h FROM x WHERE at = 0 AND NOT fills RETURNING 1
     )
     SELECT (SELECT count(*) FROM m)::int AS moved,
       CASE WHEN (SELECT count(*) FROM pd) = (SELECT count(*) FROM p WHERE fills)
         THEN ((SELECT count(*) FROM fi) + (SELECT count(*) FROM pu) + (SELECT count(*) FROM pi))::int ELSE -1 END AS tiles`,
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
 * (A partial tile holds the log's last leaves, never all removed: only full tiles are removed.)
 */
export async function pruneLeafTiles(db: Queryable, orgId: string, removedBelow: number): Promise<number> {
  const r = await db.query(
    `DELETE FROM merkle_tiles t WHERE t.org_id = $1 AND t.level = 0 AND t.idx < floor(($2::bigint - 1) / 256)
     AND NOT EXISTS (SELECT 1 FROM merkle_checkpoints c WHERE c.org_id = $1 AND c.size % 256 <> 0 AND c.size / 256 = t.idx)`,
    [orgId, removedBelow],
  );
  return r.rowCount;
}
