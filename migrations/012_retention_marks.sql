-- What retention has removed, per organization: every seq up to removed_through_seq is gone (or going) by retention.
-- A reader (replay, gap filling; possibly on a replica) that finds seqs missing announces them as removed only when
-- they are at or below this mark; above it they are not readable there yet, and it reads again later. Raised by the
-- retention pass before it deletes, so wherever the deletion is visible, the mark is too.
CREATE TABLE audit_retention_marks (
  org_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  removed_through_seq bigint NOT NULL
);

-- Retention ran before this mark existed: the seqs below an organization's oldest stored event (all of them when it
-- holds none) were removed by it.
INSERT INTO audit_retention_marks (org_id, removed_through_seq)
SELECT o.id, coalesce((SELECT min(e.seq) FROM audit_events e WHERE e.org_id = o.id) - 1, o.event_seq)
FROM organizations o
WHERE coalesce((SELECT min(e.seq) FROM audit_events e WHERE e.org_id = o.id) - 1, o.event_seq) > 0;

-- audit_contexts.digest is now the first 16 bytes of the SHA-256 of the context's RFC 8785 text, computed by the
-- service (src/audit/event-log/contexts.ts); contexts stored before keep their earlier digest (of the jsonb text), so
-- a log stream seen again after the upgrade gets one new row.
COMMENT ON COLUMN audit_contexts.digest IS 'first 16 bytes of the SHA-256 of the RFC 8785 text of context (rows before migration 012: of context::text)';
