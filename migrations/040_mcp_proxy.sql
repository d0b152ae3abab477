-- The MCP proxy: upstream servers an organization registers, its ordered policy rules, its choice when the store is
-- down, and the intents of calls in flight (written before a call is forwarded, so a call is never missing from the record).

-- One upstream MCP server per (organization, server id). `headers`: [{name, value}] sent as they are, or
-- [{name, secret: {iv, tag, data}}] whose value is AES-256-GCM ciphertext (base64) under the proxy's secrets key.
CREATE TABLE proxy_servers (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  server_id text NOT NULL,
  url text NOT NULL,
  headers jsonb NOT NULL DEFAULT '[]'::jsonb,
  timeout_ms integer NOT NULL CHECK (timeout_ms > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, server_id)
);

-- Ordered rules: the first enabled rule whose CEL condition is true decides the call's action.
CREATE TABLE proxy_rules (
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  rule_id uuid NOT NULL DEFAULT gen_random_uuid(),
  position integer NOT NULL,
  name text NOT NULL,
  condition text NOT NULL,
  action text NOT NULL CHECK (action IN ('allow', 'deny', 'flag', 'redact')),
  reason text,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, rule_id)
);
CREATE INDEX proxy_rules_order_idx ON proxy_rules (org_id, position);

-- 'refuse' (fail closed, the default): a call whose intent cannot be written is refused; 'forward': it is forwarded and
-- recorded once the store is back (best effort: a process that dies meanwhile loses that record).
ALTER TABLE organizations ADD COLUMN proxy_store_down text NOT NULL DEFAULT 'refuse' CHECK (proxy_store_down IN ('refuse', 'forward'));

-- A call about to be forwarded. Deleted once its tool_call event is appended; one left behind after `sweep_after` (its
-- deadline plus a grace period) is turned into a tool_call with outcome `unknown` by whichever instance holds the sweep
-- lease. `event`: the call's record as known before forwarding. The event's dedupe key is the call id, so the sweep and
-- a late completion never store the call twice.
CREATE TABLE proxy_call_intents (
  call_id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  started_at timestamptz NOT NULL,
  sweep_after timestamptz NOT NULL,
  event jsonb NOT NULL
);
CREATE INDEX proxy_call_intents_sweep_idx ON proxy_call_intents (sweep_after);
