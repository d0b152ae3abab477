-- Retention: an organization's own period (overriding AUDIT_RETENTION_DAYS), and leases so one instance runs a job.

-- retention_set false: the organization follows AUDIT_RETENTION_DAYS; true: retention_days applies (NULL = forever).
ALTER TABLE organizations ADD COLUMN retention_set boolean NOT NULL DEFAULT false;
ALTER TABLE organizations ADD COLUMN retention_days integer CHECK (retention_days IS NULL OR retention_days > 0);

-- One row per scheduled job: the instance holding it and until when. Taken only when free or expired (Postgres' clock).
CREATE TABLE job_leases (
  name text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
);
