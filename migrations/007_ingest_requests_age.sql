-- Idempotency-Key outcomes expire with their organization's events: the retention pass removes them by age.
CREATE INDEX ingest_requests_age_idx ON ingest_requests (org_id, created_at);
