// How tiles are stored (migration 051): a log written in the layout of 050 (one row per tile, partial ones rewritten)
// converts to full tiles split in head and tail plus the parts of partial ones, with the same hashes, and grows on from
// there by parts that are never rewritten; a growth onto a tile of another width is refused.
import { randomBytes } from 'node:crypto';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/db.js';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { createPgDb } from '../../src/db/pg-db.js';
import { createPgliteDb } from '../../src/db/pglite-db.js';
import { addLeaves, MerkleLogMismatch } from '../../src/verify/merkle-append.js';
import { readTiles } from '../../src/verify/merkle-sql.js';
import { withStoredNodes } from '../../src/verify/stored-nodes.js';
import { perfectRoot, tileWidthAt } from '../../src/verify/tiles.js';
import { memoryNodes, rootAt } from '../../src/verify/tree.js';
import { backendNames, createTestDatabase } from '../helpers/backends.js';

/** Every tile of a tree over `leaves` (level 0 the leaves, level L + 1 the roots of full level-L tiles), concatenated. */
function tilesOf(leaves: readonly Buffer[]): { level: number; idx: number; hashes: Buffer }[] {
  const out = [];
  for (let level = 0, entries = leaves.slice(); entries.length > 0; level++) {
    const next: Buffer[] = [];
    for (let t = 0; t * 256 < entries.length; t++) {
      const run = entries.slice(t * 256, (t + 1) * 256);
      out.push({ level, idx: t, hashes: Buffer.concat(run) });
      if (run.length === 256) next.push(perfectRoot(run));
    }
    entries = next;
  }
  return out;
}

describe.each(backendNames)('tile storage (%s)', (backendName) => {
  let db: Db;
  let cleanup: () => Promise<void>;
  const dirs: string[] = [];

  beforeAll(async () => {
    if (backendName === 'real') {
      const t = await createTestDatabase();
      db = createPgDb({ connectionString: t.url, max: 2 });
      cleanup = () => t.drop();
    } else {
      const dir = await mkdtemp(path.join(tmpdir(), 'audit-stream-tiles-'));
      dirs.push(dir);
      db = await createPgliteDb(dir);
      cleanup = async () => undefined;
    }
    // The schema as 050 left it.
    const upTo050 = await mkdtemp(path.join(tmpdir(), 'audit-stream-migrations-'));
    dirs.push(upTo050);
    for (const f of await readdir(MIGRATIONS_DIR)) if (/^\d+_.+\.sql$/.test(f) && f < '051') await copyFile(path.join(MIGRATIONS_DIR, f), path.join(upTo050, f));
    await migrate(db, upTo050);
  });

  afterAll(async () => {
    await db?.close();
    await cleanup?.();
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  const storedRoot = (orgId: string, size: number) => withStoredNodes(db, orgId, (nodes) => rootAt(size, nodes));
  const hex = (tiles: ReturnType<typeof tilesOf>) => tiles.map((t) => ({ level: t.level, idx: t.idx, hashes: t.hashes.toString('hex') }));
  /** The stored tiles (read as the API and proofs read them) at the places of `tiles`. */
  const storedAt = async (orgId: string, tiles: ReturnType<typeof tilesOf>) => {
    const refs = tiles.map((t) => ({ level: t.level, index: t.idx }));
    const read = await readTiles(db, orgId, refs);
    return refs.map((t) => ({ level: t.level, idx: t.index, hashes: read.get(`${t.level}/${t.index}`)?.toString('hex') }));
  };

  it('converts a log of 050\'s layout with its hashes unchanged, then grows it by parts into full tiles', async () => {
    const orgs = await Promise.all(['a', 'b'].map(async (name) => (await db.query<{ id: string }>('INSERT INTO organizations (name) VALUES ($1) RETURNING id', [name])).rows[0].id));
    const leaves = Array.from({ length: 3 * 256 + 100 }, () => randomBytes(32));
    for (const orgId of orgs) {
      for (const t of tilesOf(leaves)) await db.query('INSERT INTO merkle_tiles (org_id, level, idx, hashes) VALUES ($1, $2, $3, $4)', [orgId, t.level, t.idx, t.hashes]);
      await db.query('INSERT INTO merkle_logs (org_id, size) VALUES ($1, $2)', [orgId, leaves.length]);
    }

    expect(await migrate(db)).toContain('051_merkle_tiles_packed');
    const [orgId, other] = orgs;
    const before = tilesOf(leaves);
    expect(await storedAt(orgId, before)).toEqual(hex(before));
    expect((await storedRoot(orgId, leaves.length)).equals(rootAt(leaves.length, memoryNodes(leaves)))).toBe(true);
    const stored = await db.query<{ n: number; head: number; tail: number }>('SELECT count(*)::int AS n, min(octet_length(head)) AS head, max(octet_length(tail)) AS tail FROM merkle_tiles WHERE org_id = $1', [orgId]);
    expect(stored.rows[0]).toMatchObject({ n: 3, head: 7984, tail: 208 });

    // Appends of every shape: the one that fills the converted partial tile, single leaves, one of many tiles.
    for (const n of [200, 1, 1, 54, 600, 3]) {
      const more = Array.from({ length: n }, () => randomBytes(32));
      expect(await db.transaction((tx) => addLeaves(tx, orgId, leaves.length, more))).toBe(true);
      leaves.push(...more);
      expect((await storedRoot(orgId, leaves.length)).equals(rootAt(leaves.length, memoryNodes(leaves)))).toBe(true);
    }
    expect(await storedAt(orgId, tilesOf(leaves))).toEqual(hex(tilesOf(leaves)));
    // Only full tiles in merkle_tiles; the right edge of each level in parts, one per append that grew it.
    const full = await db.query<{ level: number; idx: string }>('SELECT level, idx FROM merkle_tiles WHERE org_id = $1 ORDER BY level, idx', [orgId]);
    expect(full.rows.map((r) => `${r.level}/${r.idx}`)).toEqual(['0/0', '0/1', '0/2', '0/3', '0/4', '0/5']);
    const parts = await db.query<{ level: number; idx: string; width: number }>('SELECT level, idx, width FROM merkle_tile_parts WHERE org_id = $1 ORDER BY level, idx, width', [orgId]);
    expect(parts.rows.map((r) => `${r.level}/${r.idx}@${r.width}`)).toEqual(['0/6@188', '0/6@191', '1/0@3', '1/0@4', '1/0@6']);
    expect(tileWidthAt({ level: 1, index: 0 }, leaves.length)).toBe(6);
    // The other organization's converted log is untouched.
    expect(await storedAt(other, before)).toEqual(hex(before));
  });

  it('refuses a growth onto a tile of another width, and fails closed when a part is missing', async () => {
    const orgId = (await db.query<{ id: string }>('INSERT INTO organizations (name) VALUES ($1) RETURNING id', ['c'])).rows[0].id;
    const leaves = Array.from({ length: 260 }, () => randomBytes(32));
    expect(await db.transaction((tx) => addLeaves(tx, orgId, 0, leaves.slice(0, 200)))).toBe(true);
    expect(await db.transaction((tx) => addLeaves(tx, orgId, 200, leaves.slice(200, 220)))).toBe(true);
    // The stored size is 220: an append that thinks it is 200 writes nothing.
    expect(await db.transaction((tx) => addLeaves(tx, orgId, 200, leaves.slice(200, 220)))).toBe(false);
    // A part removed outside the service: the tile no longer holds the 220 hashes the size says, to fill or to extend.
    await db.query('DELETE FROM merkle_tile_parts WHERE org_id = $1 AND width = 220', [orgId]);
    await expect(db.transaction((tx) => addLeaves(tx, orgId, 220, leaves.slice(220, 260)))).rejects.toBeInstanceOf(MerkleLogMismatch);
    await expect(db.transaction((tx) => addLeaves(tx, orgId, 220, leaves.slice(220, 221)))).rejects.toBeInstanceOf(MerkleLogMismatch);
  });
});
