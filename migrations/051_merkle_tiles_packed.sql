-- The verifiable log's tiles stored so they fill pages (docs/verification.md, "What is stored"): a full tile (256
-- hashes, 8,192 bytes) is split into its first 7,984 bytes, stored out of line in exactly four TOAST chunks of 1,996
-- bytes (one 8 KiB page), and its last 208 bytes kept in the row. As one value, it made a fifth chunk of 208 bytes that
-- left about a quarter page empty per tile. Partial tiles are kept apart, as the runs each append added, so no tile is
-- ever rewritten: the table of full tiles is only inserted into (and pruned by retention), and a growing tile leaves
-- no dead copies of itself.

ALTER TABLE merkle_tiles RENAME TO merkle_tiles_050;
ALTER INDEX merkle_tiles_pkey RENAME TO merkle_tiles_050_pkey;

-- Full tile (level, idx): the hashes of perfect subtrees of height 8 * level with indexes idx * 256 .. idx * 256 + 255,
-- concatenated (32 bytes each): head || tail. Level 0 holds the leaf hashes. Never updated.
CREATE TABLE merkle_tiles (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  level smallint NOT NULL CHECK (level >= 0),
  idx bigint NOT NULL CHECK (idx >= 0),
  head bytea NOT NULL CHECK (octet_length(head) = 7984),
  tail bytea NOT NULL CHECK (octet_length(tail) = 208),
  PRIMARY KEY (org_id, level, idx)
);
-- Hashes do not compress: the head goes out of line without trying (4 chunks of TOAST_MAX_CHUNK_SIZE, 1,996 bytes);
-- the tail stays in the row.
ALTER TABLE merkle_tiles ALTER COLUMN head SET STORAGE EXTERNAL, ALTER COLUMN tail SET STORAGE PLAIN;

-- Partial tiles (the right edge of each level, at most one per level of an organization's log) as the runs of hashes
-- each append added: part (level, idx, width) holds the hashes of positions up to width - 1 that follow the part
-- before it. An append adds a part (never rewrites one); the append that fills the tile writes it to merkle_tiles and
-- removes its parts.
CREATE TABLE merkle_tile_parts (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  level smallint NOT NULL CHECK (level >= 0),
  idx bigint NOT NULL CHECK (idx >= 0),
  width smallint NOT NULL CHECK (width BETWEEN 1 AND 255),
  hashes bytea NOT NULL CHECK (octet_length(hashes) BETWEEN 32 AND width * 32 AND octet_length(hashes) % 32 = 0),
  PRIMARY KEY (org_id, level, idx, width)
);
-- Kept in the row (out of line only when it does not fit): a removed part leaves one dead row, not TOAST chunks.
ALTER TABLE merkle_tile_parts ALTER COLUMN hashes SET STORAGE MAIN;

-- Every tile, full or partial, as one value (its hashes concatenated): what the API serves and proofs read.
CREATE VIEW merkle_tile_hashes AS
  SELECT org_id, level, idx, head || tail AS hashes FROM merkle_tiles
  UNION ALL
  SELECT org_id, level, idx, string_agg(hashes, ''::bytea ORDER BY width) FROM merkle_tile_parts GROUP BY org_id, level, idx;

INSERT INTO merkle_tiles (org_id, level, idx, head, tail)
  SELECT org_id, level, idx, substring(hashes FROM 1 FOR 7984), substring(hashes FROM 7985)
  FROM merkle_tiles_050 WHERE octet_length(hashes) = 8192 ORDER BY org_id, level, idx;
INSERT INTO merkle_tile_parts (org_id, level, idx, width, hashes)
  SELECT org_id, level, idx, octet_length(hashes) / 32, hashes FROM merkle_tiles_050 WHERE octet_length(hashes) < 8192;
DROP TABLE merkle_tiles_050;
