-- The verifiable log of each organization (docs/verification.md): an RFC 9162 Merkle tree whose leaf i is the
-- canonical record of seq i + 1, kept as C2SP tiles (hashes, never a second copy of events), its size, its signed
-- checkpoints and every verifier key that ever signed one.

-- Leaves in the organization's tree (seqs 1..size); moved in the transaction that assigns the seqs.
CREATE TABLE merkle_logs (
  org_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  size bigint NOT NULL CHECK (size >= 0)
);

-- Tile (level, idx): the hashes of perfect subtrees of height 8 * level with indexes idx * 256 .. idx * 256 + width - 1,
-- concatenated (32 bytes each, width at most 256). Level 0 holds the leaf hashes. A tile only grows at its end.
CREATE TABLE merkle_tiles (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  level smallint NOT NULL CHECK (level >= 0),
  idx bigint NOT NULL CHECK (idx >= 0),
  hashes bytea NOT NULL CHECK (octet_length(hashes) BETWEEN 32 AND 8192 AND octet_length(hashes) % 32 = 0),
  PRIMARY KEY (org_id, level, idx)
);
-- Hashes do not compress: stored without trying.
ALTER TABLE merkle_tiles ALTER COLUMN hashes SET STORAGE EXTERNAL;

-- Signed checkpoints (C2SP tlog-checkpoint in a C2SP signed-note), one per size, never rewritten.
CREATE TABLE merkle_checkpoints (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  size bigint NOT NULL CHECK (size >= 0),
  root bytea NOT NULL,
  note text NOT NULL,
  issued_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, size)
);

CREATE FUNCTION merkle_checkpoints_unchanged() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a signed checkpoint is never rewritten';
END
$$;
CREATE TRIGGER merkle_checkpoints_unchanged BEFORE UPDATE ON merkle_checkpoints
  FOR EACH ROW EXECUTE FUNCTION merkle_checkpoints_unchanged();

-- The verifier keys (name+hexid+base64key) that signed checkpoints: a rotated key stays published.
CREATE TABLE merkle_verifier_keys (
  verifier_key text PRIMARY KEY,
  first_used_at timestamptz NOT NULL DEFAULT now()
);

-- Organizations that exist now start with an empty log; their stored events are added as leaves by the next appends
-- (in bounded steps, MERKLE_CATCHUP_EVENTS), as are events appended while MERKLE_LOG is off.
INSERT INTO merkle_logs (org_id, size) SELECT id, 0 FROM organizations;
