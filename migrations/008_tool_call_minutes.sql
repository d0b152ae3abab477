-- The dashboard's aggregate (GET /api/v1/audit-events/stats) from a per-minute count of tool calls by action, kept by
-- statement triggers on audit_events (inserts add, deletes such as retention's subtract), so a window costs its
-- minutes (60 or 1,440 per action), not its events.

-- The action bucket of src/audit/action-keys.ts: the four known actions, anything else (null included) 'unknown'.
CREATE FUNCTION audit_action_key(action text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN action IN ('allow', 'deny', 'redact', 'flag') THEN action ELSE 'unknown' END $$;

CREATE TABLE audit_call_minutes (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  -- floor(epoch seconds of occurred_at / 60)
  minute bigint NOT NULL,
  action text NOT NULL,
  calls bigint NOT NULL,
  PRIMARY KEY (org_id, minute, action)
);

CREATE FUNCTION audit_call_minutes_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_call_minutes AS m (org_id, minute, action, calls)
  SELECT org_id, floor(extract(epoch FROM occurred_at) / 60)::bigint, audit_action_key(action), count(*)
  FROM new_rows WHERE type = 'tool_call' GROUP BY 1, 2, 3
  -- In key order, as the delete trigger locks them: an insert and a retention delete never wait on each other in a cycle.
  ORDER BY 1, 2, 3
  ON CONFLICT (org_id, minute, action) DO UPDATE SET calls = m.calls + excluded.calls;
  RETURN NULL;
END
$$;

CREATE FUNCTION audit_call_minutes_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Lock the minutes in key order first (as inserts upsert them), then subtract.
  PERFORM 1 FROM audit_call_minutes m
  WHERE (m.org_id, m.minute, m.action) IN (
    SELECT org_id, floor(extract(epoch FROM occurred_at) / 60)::bigint, audit_action_key(action) FROM old_rows WHERE type = 'tool_call')
  ORDER BY m.org_id, m.minute, m.action FOR UPDATE;
  UPDATE audit_call_minutes m SET calls = m.calls - gone.n
  FROM (SELECT org_id, floor(extract(epoch FROM occurred_at) / 60)::bigint AS minute, audit_action_key(action) AS action, count(*) AS n
        FROM old_rows WHERE type = 'tool_call' GROUP BY 1, 2, 3) AS gone
  WHERE m.org_id = gone.org_id AND m.minute = gone.minute AND m.action = gone.action;
  -- Minutes left without calls go (retention would otherwise leave one row per minute ever counted).
  DELETE FROM audit_call_minutes m
  USING (SELECT DISTINCT org_id, floor(extract(epoch FROM occurred_at) / 60)::bigint AS minute FROM old_rows WHERE type = 'tool_call') AS gone
  WHERE m.org_id = gone.org_id AND m.minute = gone.minute AND m.calls <= 0;
  RETURN NULL;
END
$$;

CREATE TRIGGER audit_events_call_minutes_add AFTER INSERT ON audit_events
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION audit_call_minutes_add();
CREATE TRIGGER audit_events_call_minutes_remove AFTER DELETE ON audit_events
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION audit_call_minutes_remove();

INSERT INTO audit_call_minutes (org_id, minute, action, calls)
SELECT org_id, floor(extract(epoch FROM occurred_at) / 60)::bigint, audit_action_key(action), count(*)
FROM audit_events WHERE type = 'tool_call' GROUP BY 1, 2, 3;
