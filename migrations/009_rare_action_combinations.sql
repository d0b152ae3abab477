-- Filter combinations the dashboard and API use: a server or a tool with one of the rare actions (deny, redact, flag,
-- ...). Walking the action index and checking the server took 16,000 buffers for a rare server at 5 M events; these
-- hold only the non-allow rows (about 5 %), so they cost ~2-3 bytes per event each.
CREATE INDEX audit_events_server_action_idx ON audit_events (uuid_hash(org_id), server_id, action, seq) WHERE action <> 'allow';
CREATE INDEX audit_events_tool_action_idx ON audit_events (uuid_hash(org_id), tool_name, action, seq) WHERE action <> 'allow';
