-- Fills a migrated database with one large organization (:n events over 90 days) and four small ones, by SQL.
-- Keys are realistic: ~50 servers, ~200 tools (skewed), ~20,000 sessions, mostly allow with rare deny, 3 sources.
-- psql -v n=5000000 -f bench/sql/history-fill.sql
-- The large organization is :org (default 00000000-0000-4000-8000-00000000000a); it may exist already (created through the
-- admin API, with an API key) but must hold no events yet. `npm run bench -- history` passes both variables.
\set ON_ERROR_STOP on
\if :{?org}
\else
  \set org '00000000-0000-4000-8000-00000000000a'
\endif
INSERT INTO organizations (id, name) VALUES
  (:'org', 'big'),
  ('00000000-0000-4000-8000-00000000000b', 'small-1'),
  ('00000000-0000-4000-8000-00000000000c', 'small-2'),
  ('00000000-0000-4000-8000-00000000000d', 'small-3'),
  ('00000000-0000-4000-8000-00000000000e', 'small-4')
ON CONFLICT (id) DO NOTHING;

CREATE TEMP TABLE fill_orgs AS
  SELECT :'org'::uuid AS org_id, :n::bigint AS n
  UNION ALL SELECT ('00000000-0000-4000-8000-00000000000' || c)::uuid, 50000 FROM unnest(ARRAY['b','c','d','e']) AS c;

INSERT INTO audit_events (org_id, seq, occurred_at, received_at, source, type, server_id, session_id, tool_name, action, latency_ms, payload, metadata, dedupe_key)
SELECT o.org_id, g, v.t, v.t + interval '150 ms', v.src, v.typ, v.srv,
       CASE WHEN v.typ = 'log' THEN NULL ELSE v.ses END,
       CASE WHEN v.typ = 'tool_call' THEN v.tool END,
       CASE WHEN v.typ = 'tool_call' THEN v.act END,
       CASE WHEN v.typ = 'tool_call' THEN v.lat END,
       CASE v.typ
         WHEN 'tool_call' THEN json_build_object('type', 'tool_call', 'serverId', v.srv, 'sessionId', v.ses, 'toolName', v.tool, 'action', v.act, 'latencyMs', v.lat, 'timestamp', v.t)
         WHEN 'anomaly' THEN json_build_object('type', 'anomaly', 'kind', 'rate_spike', 'serverId', v.srv, 'rate', 420, 'baseline', 80, 'timestamp', v.t)
         WHEN 'session_update' THEN json_build_object('type', 'session_update', 'sessionId', v.ses, 'status', 'suspended', 'timestamp', v.t)
       END,
       CASE v.src
         WHEN 'cloudwatch' THEN jsonb_build_object('source_detail', '/aws/lambda/mcp-gateway', 'traceId', md5(g::text), 'logStream', '2026/11/01/[$LATEST]' || left(md5(o.org_id::text), 16), 'payloadFormat', 'subscription')
         WHEN 'datadog' THEN jsonb_build_object('source_detail', 'mcp-gateway', 'traceId', left(md5(g::text), 16))
         ELSE '{}'::jsonb
       END,
       CASE v.src WHEN 'cloudwatch' THEN 'cw:' || (37000000000000000000000000000000000000000000000000000000 + g)::text
                  WHEN 'datadog' THEN 'dd:' || md5(g::text)
                  ELSE 'raw:id:' || md5(o.org_id::text || g::text) END
FROM fill_orgs o
CROSS JOIN LATERAL generate_series(1, o.n) AS g
CROSS JOIN LATERAL (
  SELECT now() - interval '90 days' + (g::float8 / o.n) * interval '90 days' + (random() * interval '2 seconds') AS t,
         CASE WHEN r.a < 0.6 THEN 'raw' WHEN r.a < 0.85 THEN 'cloudwatch' ELSE 'datadog' END AS src,
         CASE WHEN r.b < 0.965 THEN 'tool_call' WHEN r.b < 0.9995 THEN 'log' WHEN r.b < 0.9998 THEN 'session_update' ELSE 'anomaly' END AS typ,
         'mcp-server-' || floor(50 * r.c * r.c)::int AS srv,
         'sess-' || (g * 20000 / o.n)::int || '-' || left(md5(o.org_id::text), 6) AS ses,
         'tool_' || floor(200 * r.d * r.d * r.d)::int AS tool,
         CASE WHEN r.e < 0.95 THEN 'allow' WHEN r.e < 0.98 THEN 'redact' WHEN r.e < 0.997 THEN 'flag' ELSE 'deny' END AS act,
         floor(5 + r.f * 800)::int AS lat
  FROM (SELECT random() AS a, random() AS b, random() AS c, random() AS d, random() AS e, random() AS f, g AS dep) AS r
) AS v;

UPDATE organizations o SET event_seq = f.n FROM fill_orgs f WHERE o.id = f.org_id;

INSERT INTO servers (org_id, server_id, first_seen_at, last_seen_at)
SELECT org_id, server_id, min(occurred_at), max(occurred_at) FROM audit_events WHERE server_id IS NOT NULL GROUP BY 1, 2
ON CONFLICT DO NOTHING;
INSERT INTO agent_sessions (org_id, session_id, server_id, first_seen_at, last_seen_at, tool_call_count)
SELECT org_id, session_id, min(server_id), min(occurred_at), max(occurred_at), count(*) FILTER (WHERE type = 'tool_call')
FROM audit_events WHERE session_id IS NOT NULL GROUP BY 1, 2
ON CONFLICT DO NOTHING;
ANALYZE;
