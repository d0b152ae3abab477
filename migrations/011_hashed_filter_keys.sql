-- The server, session and tool filter indexes keyed by a 4-byte hash of the value instead of its text
-- (docs/performance-history.md, "Filter indexes of fixed width").
--
-- A leaf page split by an append in the middle of the index (the end of one server's range, say) is split in half
-- unless Postgres recognizes the append ("split after the new item", nbtsplitloc.c), which it does only for entries
-- of at most 24 bytes (two int8s) whose left neighbour was inserted just before (adjacent heap tuples). Text keys are
-- wider: measured on 1.4 M events filled in seq order, these three indexes were half empty (88, 83 and 68 bytes per
-- event). Every entry is now 24 bytes (organization hash, value hash, seq), so pages split full, and like the source
-- index (migration 010) they are packed full (fillfactor 100): entries of one organization and value arrive in seq
-- order, at the end of their range.
--
-- Queries state audit_key_hash(column) = audit_key_hash($value) beside column = $value (audit-repo.ts); the heap check
-- of the column tells apart two values that share a hash, as it does for organizations (uuid_hash, migration 006).
CREATE FUNCTION audit_key_hash(value text) RETURNS integer
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT hashtext(value) $$;

DROP INDEX audit_events_session_idx, audit_events_server_idx, audit_events_tool_idx;
CREATE INDEX audit_events_session_idx ON audit_events (uuid_hash(org_id), audit_key_hash(session_id), seq)
  WITH (fillfactor = 100) WHERE session_id IS NOT NULL;
CREATE INDEX audit_events_server_idx ON audit_events (uuid_hash(org_id), audit_key_hash(server_id), seq)
  WITH (fillfactor = 100) WHERE server_id IS NOT NULL;
CREATE INDEX audit_events_tool_idx ON audit_events (uuid_hash(org_id), audit_key_hash(tool_name), seq)
  WITH (fillfactor = 100) WHERE tool_name IS NOT NULL;

-- The primary key's entries (organization, seq) also arrive in seq order at the end of their organization's range:
-- the page split at the end of the whole index (the organization whose range is last) is left full too (it kept a
-- tenth free for inserts that never come). Its entries (32 bytes) are too wide for the append to be recognized in the
-- middle of the index: there pages still split in half.
ALTER INDEX audit_events_pkey SET (fillfactor = 100);

-- A query states both column = $value and its hash's equality; the planner, taking them for independent conditions,
-- multiplied their selectivities and chose worse plans (a bitmap of a common server's whole range instead of the
-- type index, 0.3 -> 22.6 ms at 1.4 M events). These statistics (built by ANALYZE) tell it the hash follows from the
-- value. The source code of migration 010 gets the same.
CREATE STATISTICS audit_events_server_hash_stats (dependencies) ON server_id, audit_key_hash(server_id) FROM audit_events;
CREATE STATISTICS audit_events_session_hash_stats (dependencies) ON session_id, audit_key_hash(session_id) FROM audit_events;
CREATE STATISTICS audit_events_tool_hash_stats (dependencies) ON tool_name, audit_key_hash(tool_name) FROM audit_events;
CREATE STATISTICS audit_events_source_code_stats (dependencies) ON source, audit_source_code(source) FROM audit_events;

-- Built now rather than at the next autovacuum analyze, which on a large table comes only after a tenth of it has
-- changed: until then the planner would multiply the selectivities as above. ANALYZE reads a sample (30,000 rows at
-- the default statistics target), not the table.
ANALYZE audit_events;
