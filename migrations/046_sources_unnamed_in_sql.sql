-- The database names no ingest source: the `source` filter index is keyed by the generic 4-byte hash of the value
-- (audit_key_hash, migration 011) instead of a code per known source name, and an event's metadata is put back
-- together with its log batch's shared part by one rule for every source.
--
-- The index keeps its width (organization hash, value hash, seq: 24-byte entries that split full in seq order); two
-- sources sharing a hash are told apart by the heap check of `source = $source`, which queries state beside it.
DROP STATISTICS audit_events_source_code_stats;
DROP INDEX audit_events_source_idx;
DROP FUNCTION audit_source_code(text);
CREATE INDEX audit_events_source_idx ON audit_events (uuid_hash(org_id), audit_key_hash(source), seq) WITH (fillfactor = 100);
CREATE STATISTICS audit_events_source_hash_stats (dependencies) ON source, audit_key_hash(source) FROM audit_events;

-- An event's metadata as it was sent: its own keys over the shared ones, and each key whose shared and own values are
-- both objects merged one level down (the shared object's keys, then the event's own). The event log stores the own
-- part by the same rule (src/audit/event-log/contexts.ts); rows stored under migration 010's rule read the same, since
-- it was this rule for the one nested key it knew and every other shared key is absent from the own part.
CREATE OR REPLACE FUNCTION audit_event_metadata(metadata jsonb, context jsonb) RETURNS jsonb
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE
    WHEN context IS NULL THEN metadata
    ELSE (context || metadata) || coalesce(
      (SELECT jsonb_object_agg(c.key, c.value || (metadata -> c.key)) FROM jsonb_each(context) AS c
        WHERE jsonb_typeof(c.value) = 'object' AND jsonb_typeof(metadata -> c.key) = 'object'),
      '{}'::jsonb)
  END $$;
