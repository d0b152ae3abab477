-- Recent anomalies of an organization by time (the dashboard's aggregate view), without walking its tool calls.
CREATE INDEX IF NOT EXISTS audit_events_anomaly_time_idx ON audit_events (org_id, occurred_at) WHERE type = 'anomaly';
