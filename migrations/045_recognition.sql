-- Recognition: an organization's own profiles (CEL; tried before the built-in ones) and the records no profile read,
-- counted by source and name with one sample each.

-- One profile per (organization, profile id); `version` rises on every change; `position` keeps the order they were
-- added in (the order they are tried).
CREATE TABLE recognition_profiles (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  profile_id text NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  position bigserial NOT NULL,
  body jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, profile_id)
);

-- Unrecognized records by (organization, source, name): at most RECOGNITION_UNRECOGNIZED_MAX_NAMES rows per
-- organization (later names are counted under `(other)`), each sample at most RECOGNITION_UNRECOGNIZED_SAMPLE_BYTES.
CREATE TABLE recognition_unrecognized (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  source text NOT NULL,
  name text NOT NULL,
  count bigint NOT NULL CHECK (count >= 0),
  sample text NOT NULL,
  first_seen timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, source, name)
);
