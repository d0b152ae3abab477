-- Fewer bytes per log-source event: a batch's shared metadata (log group, log stream, owner, subscription filters, ...)
-- stored once per organization instead of in every event; an index for the `source` filter of the listing.

-- One row per distinct shared metadata of an organization's log batches (the same log stream's batches share one).
-- `context` holds top-level metadata keys (source_detail, payloadFormat) and the shared part of metadata.cloudwatch;
-- an event keeps only its own keys and names its row in context_id. `digest` (first 16 bytes of the SHA-256 of the
-- jsonb text) finds a context again; `id` is per organization, assigned under the organization's seq lock.
-- `last_seq`: the largest seq of an event stored with it (raised on every use), so retention removes a context once
-- every event up to it is gone, without an index on audit_events(context_id).
CREATE TABLE audit_contexts (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  id integer NOT NULL,
  digest bytea NOT NULL,
  last_seq bigint NOT NULL,
  context jsonb NOT NULL,
  PRIMARY KEY (org_id, id),
  UNIQUE (org_id, digest)
) WITH (fillfactor = 70); -- room for the last_seq updates to stay on their page (HOT)

CREATE FUNCTION audit_context_digest(context jsonb) RETURNS bytea
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT substring(sha256(convert_to(context::text, 'UTF8')) FROM 1 FOR 16) $$;

-- An event's metadata as it was sent: its own keys over the shared ones, and metadata.cloudwatch rebuilt from both.
-- In SQL, so the result is the same jsonb (the same key order) as the whole metadata stored inline.
CREATE FUNCTION audit_event_metadata(metadata jsonb, context jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE
    WHEN context IS NULL THEN metadata
    WHEN context ? 'cloudwatch' THEN ((context - 'cloudwatch') || metadata)
      || jsonb_build_object('cloudwatch', (context -> 'cloudwatch') || coalesce(metadata -> 'cloudwatch', '{}'::jsonb))
    ELSE context || metadata
  END $$;

-- NULL for events without shared metadata. Rows stored before keep their whole metadata inline (context_id NULL):
-- rewriting them here would rewrite the table; retention removes them in time.
ALTER TABLE audit_events ADD COLUMN context_id integer;

-- The `source` filter (GET /api/v1/audit-events?source=...): a small code instead of the text (an entry of 24 bytes
-- whatever the source's name). Queries state audit_source_code(source) = audit_source_code($source) beside
-- source = $source; a source without its own code shares 0 and is still told apart by the heap check.
CREATE FUNCTION audit_source_code(source text) RETURNS smallint
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT (CASE source WHEN 'raw' THEN 1 WHEN 'cloudwatch' THEN 2 WHEN 'firehose' THEN 3 WHEN 'datadog' THEN 4
    WHEN 'otlp' THEN 5 WHEN 'system' THEN 6 WHEN 'operator' THEN 7 ELSE 0 END)::smallint $$;
-- Entries of one organization and source arrive in seq order, at the end of their range: pages split full (fillfactor
-- 100) are not written to again, so none of them is left with room kept for inserts that never come.
CREATE INDEX audit_events_source_idx ON audit_events (uuid_hash(org_id), audit_source_code(source), seq) WITH (fillfactor = 100);
