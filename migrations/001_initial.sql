-- Initial schema: organizations, accounts, API keys, servers, agent sessions and the audit event log.

CREATE TABLE organizations (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  -- last seq handed out to this org's audit events; the row lock on it orders commits
  event_seq bigint NOT NULL DEFAULT 0,
  anomaly_settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE memberships (
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, org_id)
);
CREATE INDEX memberships_org_idx ON memberships (org_id);

CREATE TABLE login_sessions (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash text NOT NULL UNIQUE,
  user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  active_org_id uuid REFERENCES organizations (id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX login_sessions_user_idx ON login_sessions (user_id);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  -- first characters of the key, shown in listings so people can tell keys apart
  key_prefix text NOT NULL,
  -- sha256 of the whole key, hex; the key itself is never stored
  key_hash text NOT NULL UNIQUE,
  scopes text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_org_idx ON api_keys (org_id);

CREATE TABLE servers (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  server_id text NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, server_id)
);

CREATE TABLE agent_sessions (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  session_id text NOT NULL,
  server_id text,
  status text NOT NULL DEFAULT 'active',
  status_reason text,
  status_changed_by text,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at timestamptz NOT NULL DEFAULT now(),
  status_changed_at timestamptz NOT NULL DEFAULT now(),
  tool_call_count bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, session_id)
);
CREATE INDEX agent_sessions_org_status_idx ON agent_sessions (org_id, status, last_seen_at DESC);

CREATE TABLE audit_events (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  occurred_at timestamptz NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  source text NOT NULL,
  type text NOT NULL,
  server_id text,
  session_id text,
  tool_name text,
  action text,
  latency_ms integer,
  -- the stream payload of streamable events (spec 2.1-2.3 fields), exactly as sent over SSE; null when not streamed
  payload json,
  metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  dedupe_key text NOT NULL,
  PRIMARY KEY (org_id, seq),
  UNIQUE (org_id, dedupe_key)
);
CREATE INDEX audit_events_session_idx ON audit_events (org_id, session_id, seq) WHERE session_id IS NOT NULL;
CREATE INDEX audit_events_server_idx ON audit_events (org_id, server_id, seq) WHERE server_id IS NOT NULL;
CREATE INDEX audit_events_occurred_idx ON audit_events (org_id, occurred_at);
