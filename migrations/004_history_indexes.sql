-- History at scale: indexes chosen by measurement at 5 M events of one organization (docs/performance-history.md).
--
-- audit_event_hours maps each hour of occurred_at to the seq range of the events that occurred in it. Listing by a
-- time range (ordered by seq) turns into a walk of an exact seq range instead of a scan of everything newer, and the
-- stats window, the export and retention find their rows the same way. A statement trigger keeps it, whoever inserts.
CREATE TABLE audit_event_hours (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- floor(epoch seconds of occurred_at / 3600): independent of any session time zone
  hour integer NOT NULL,
  min_seq bigint NOT NULL,
  max_seq bigint NOT NULL,
  events bigint NOT NULL,
  PRIMARY KEY (org_id, hour)
);

CREATE FUNCTION audit_event_hours_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_event_hours AS h (org_id, hour, min_seq, max_seq, events)
  SELECT org_id, floor(extract(epoch FROM occurred_at) / 3600)::integer, min(seq), max(seq), count(*)
  FROM new_rows GROUP BY 1, 2
  ON CONFLICT (org_id, hour) DO UPDATE SET
    min_seq = least(h.min_seq, excluded.min_seq),
    max_seq = greatest(h.max_seq, excluded.max_seq),
    events = h.events + excluded.events;
  RETURN NULL;
END
$$;

CREATE TRIGGER audit_events_hours AFTER INSERT ON audit_events
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION audit_event_hours_add();

INSERT INTO audit_event_hours (org_id, hour, min_seq, max_seq, events)
SELECT org_id, floor(extract(epoch FROM occurred_at) / 3600)::integer, min(seq), max(seq), count(*)
FROM audit_events GROUP BY 1, 2;

-- Filters that select few rows, walked in seq order. A tool name can be rare in any organization; action and type are
-- indexed only for their rare values (allow and tool_call are most rows, found at once by walking the primary key).
CREATE INDEX audit_events_tool_idx ON audit_events (org_id, tool_name, seq) WHERE tool_name IS NOT NULL;
CREATE INDEX audit_events_action_idx ON audit_events (org_id, action, seq) WHERE action <> 'allow';
CREATE INDEX audit_events_type_idx ON audit_events (org_id, type, seq) WHERE type <> 'tool_call';

-- Replaced by audit_event_hours for every reader (time filters, stats window, export); anomalies keep their own index.
DROP INDEX audit_events_occurred_idx;
