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

-- The shared metadata of the CloudWatch batches (migration 010), as the service stores it: one context per log stream,
-- a stream per 5,000 seqs (its batches share it), last_seq the stream's last seq.
INSERT INTO audit_contexts (org_id, id, digest, last_seq, context)
SELECT o.org_id, b + 1, audit_context_digest(c.context), least(b * 5000 + 4999, o.n), c.context
FROM fill_orgs o
CROSS JOIN LATERAL generate_series(0, o.n / 5000) AS b
CROSS JOIN LATERAL (
  SELECT jsonb_build_object('source_detail', '/aws/lambda/mcp-gateway-prod', 'payloadFormat', 'subscription',
    'cloudwatch', jsonb_build_object('logGroup', '/aws/lambda/mcp-gateway-prod', 'logStream', '2026/11/01/[$LATEST]' || md5(o.org_id::text || b::text),
      'owner', '123456789012', 'subscriptionFilters', jsonb_build_array('mcp-audit'), 'messageType', 'DATA_MESSAGE')) AS context
) AS c;

INSERT INTO audit_events (org_id, seq, occurred_at, received_at, source, type, server_id, session_id, tool_name, action, latency_ms, payload, metadata, dedupe_key, context_id)
SELECT o.org_id, g, v.t, v.t + interval '150 ms', v.src, v.typ, v.srv,
       CASE WHEN v.typ = 'log' THEN NULL ELSE v.ses END,
       CASE WHEN v.typ = 'tool_call' THEN v.tool END,
       CASE WHEN v.typ = 'tool_call' THEN v.act END,
       CASE WHEN v.typ = 'tool_call' THEN v.lat END,
       CASE v.typ
         -- tool calls: NULL, their stream payload is rebuilt from the columns (migration 006)
         WHEN 'anomaly' THEN json_build_object('type', 'anomaly', 'kind', 'rate_spike', 'serverId', v.srv, 'rate', 420, 'baseline', 80, 'timestamp', v.t)
         WHEN 'session_update' THEN json_build_object('type', 'session_update', 'sessionId', v.ses, 'status', 'suspended', 'timestamp', v.t)
       END,
       -- metadata as the service stores it per source (src/ingest/to-audit-event.ts): the raw message whole, its parsed
       -- fields and the ids found in it; a CloudWatch event's batch context is its stream's audit_contexts row, the event
       -- keeps its own eventId; a raw event keeps its own id
       CASE v.src
         WHEN 'cloudwatch' THEN jsonb_build_object('traceId', v.trace, 'requestId', v.req,
           'actionWord', v.word, 'level', 'INFO', 'format', 'logfmt',
           'fields', jsonb_build_object('level', 'info', 'msg', 'tool call', 'tool', v.tool, 'action', v.word, 'server', v.srv, 'session', v.ses, 'latency_ms', v.lat::text, 'trace_id', v.trace),
           'message', to_char(v.t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || E'\t' || v.req || E'\tINFO\tlevel=info msg="tool call" tool=' || v.tool || ' action=' || v.word
             || ' server=' || v.srv || ' session=' || v.ses || ' latency_ms=' || v.lat || ' trace_id=' || v.trace || E'\n',
           'cloudwatch', jsonb_build_object('eventId', (37000000000000000000000000000000000000000000000000000000 + g)::text))
         WHEN 'datadog' THEN jsonb_build_object('source_detail', 'mcp-gateway', 'traceId', v.trace, 'level', 'info', 'format', 'json',
           'fields', jsonb_build_object('tool', v.tool, 'outcome', v.word, 'server', v.srv, 'session_id', v.ses, 'duration_ms', v.lat),
           'message', json_build_object('msg', 'tool call', 'tool', v.tool, 'outcome', v.word, 'server', v.srv, 'session_id', v.ses, 'duration_ms', v.lat, 'dd.trace_id', v.trace)::text,
           'datadog', jsonb_build_object('id', md5(g::text), 'host', 'ip-10-0-' || (g % 200) || '-17.ec2.internal', 'service', 'mcp-gateway', 'status', 'info',
             'tags', jsonb_build_array('env:prod', 'team:platform', 'source:mcp-gateway')))
         ELSE jsonb_build_object('id', md5(o.org_id::text || g::text))
       END,
       audit_dedupe_digest(CASE v.src WHEN 'cloudwatch' THEN 'cw:' || (37000000000000000000000000000000000000000000000000000000 + g)::text
                  WHEN 'datadog' THEN 'dd:' || md5(g::text)
                  ELSE 'raw:id:' || md5(o.org_id::text || g::text) END),
       CASE WHEN v.src = 'cloudwatch' THEN (g / 5000)::int + 1 END
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
         floor(5 + r.f * 800)::int AS lat,
         CASE WHEN r.e < 0.95 THEN 'allowed' WHEN r.e < 0.98 THEN 'redacted' WHEN r.e < 0.997 THEN 'flagged' ELSE 'blocked' END AS word,
         left(md5(g::text || 't'), 16) AS trace,
         (md5(g::text || 'r')::uuid)::text AS req
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
