// Documented log formats of MCP gateways and proxies (and Powertools), sent through CloudWatch as an awslogs envelope: every mapped field, stored and streamed.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';
import { expectStreamedExactly, fixture, ingestedEvents, postJson, storedEvents, type StoredEvent } from './ingest-kit.js';

const T0 = Date.parse('2025-06-01T09:00:00.000Z');
const GROUP = '/ecs/mcp-gateway';

/** The non-empty lines of a fixture file. */
function lines(path: string): string[] {
  return fixture(path)
    .toString('utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
}

/** A Lambda subscription event holding the lines as log events one second apart, with CloudWatch ids. */
function awslogs(messages: string[]) {
  const payload = {
    messageType: 'DATA_MESSAGE',
    owner: '123456789012',
    logGroup: GROUP,
    logStream: 'gateway/7f3a',
    subscriptionFilters: ['gateway-to-audit'],
    logEvents: messages.map((message, i) => ({ id: String(10n ** 55n + BigInt(i)), timestamp: T0 + i * 1000, message })),
  };
  return { awslogs: { data: gzipSync(JSON.stringify(payload)).toString('base64') } };
}

const at = (i: number) => new Date(T0 + i * 1000).toISOString();

/** Every field a gateway line can map to, for a field-by-field comparison (absent metadata is null). */
function mapped(e: StoredEvent) {
  const m = e.metadata;
  return {
    type: e.type,
    toolName: e.toolName,
    action: e.action,
    serverId: e.serverId,
    sessionId: e.sessionId,
    latencyMs: e.latencyMs,
    occurredAt: e.occurredAt,
    actionWord: m.actionWord ?? null,
    rawAction: m.rawAction ?? null,
    traceId: m.traceId,
    requestId: m.requestId ?? null,
    toolCallId: m.toolCallId ?? null,
    mcpMethod: m.mcpMethod ?? null,
    format: m.format,
  };
}

const none = { serverId: null, sessionId: null, latencyMs: null, actionWord: null, rawAction: null, traceId: null, requestId: null, toolCallId: null, mcpMethod: null };

describe.each(backendNames)('gateway log formats through CloudWatch (%s)', (backendName) => {
  const { app } = suiteApp(backendName);

  /** Posts the fixture's lines, checks the answer, the stored lines and the stream; returns the stored events. */
  async function ingest(path: string): Promise<{ org: TestOrg; items: StoredEvent[]; check: () => Promise<void> }> {
    const org = await createOrg(app.url);
    const sse = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const sent = lines(path);
    const r = await postJson(app.url, 'cloudwatch', org.key, awslogs(sent));
    expect(r.body).toEqual({ accepted: sent.length, duplicates: 0 });
    const items = await ingestedEvents(app.url, org.key);
    expect(items.map((e) => e.metadata.message)).toEqual(sent);
    for (const e of items) expect(e.metadata).toMatchObject({ source_detail: GROUP, payloadFormat: 'awslogs' });
    return { org, items, check: async () => expectStreamedExactly(sse, app.url, org.key, await storedEvents(app.url, org.key)) };
  }

  it('Kong AI MCP Proxy: tool and action from the ai.mcp.rpc[] and ai.mcp.audit[] arrays, session, latency, method; a denied call', async () => {
    const { items, check } = await ingest('gateways/kong-ai-mcp-proxy.jsonl');
    const session = 'f3c2b1a0-9d8e-4c7b-a6f5-e4d3c2b1a098';
    expect(items.map(mapped)).toEqual([
      { ...none, type: 'tool_call', toolName: 'list_orders', action: 'allow', actionWord: 'allow', sessionId: session, latencyMs: 6, mcpMethod: 'tools/call', occurredAt: at(0), format: 'json' },
      { ...none, type: 'tool_call', toolName: 'delete_orders', action: 'deny', actionWord: 'deny', sessionId: session, occurredAt: at(1), format: 'json' },
    ]);
    await check();
  });

  it('mcpproxy-go activity log: server_name, tool_name, status success|error|blocked, duration_ms, session_id, request_id', async () => {
    const { items, check } = await ingest('gateways/mcpproxy-activity.jsonl');
    const call = { ...none, type: 'tool_call', sessionId: 'mcp-session-abc123', format: 'json' };
    expect(items.map(mapped)).toEqual([
      { ...call, toolName: 'create_issue', serverId: 'github-server', action: 'allow', actionWord: 'success', latencyMs: 245, requestId: 'a1b2c3d4-e5f6-7890-abcd-ef1234567890', traceId: 'a1b2c3d4-e5f6-7890-abcd-ef1234567890', occurredAt: at(0) },
      { ...call, toolName: 'get_user', serverId: 'github-server', action: 'allow', actionWord: 'error', latencyMs: 1203, requestId: 'b2c3d4e5-f6a7-8901-bcde-f12345678901', traceId: 'b2c3d4e5-f6a7-8901-bcde-f12345678901', occurredAt: at(1) },
      { ...call, toolName: 'delete_file', serverId: 'filesystem-server', action: 'deny', actionWord: 'blocked', latencyMs: 0, requestId: 'c3d4e5f6-a7b8-9012-cdef-123456789012', traceId: 'c3d4e5f6-a7b8-9012-cdef-123456789012', occurredAt: at(2) },
    ]);
    await check();
  });

  it('Docker MCP Gateway --log-calls lines: the outcome line is the call (tool, Go duration, status word); the start line is kept as a log entry', async () => {
    const { items, check } = await ingest('gateways/docker-mcp-gateway.log');
    const start = (i: number, tool: string) => ({ ...none, type: 'log', toolName: null, action: null, occurredAt: at(i), format: 'gateway-line', tool });
    const call = (i: number, toolName: string, latencyMs: number, actionWord: string) => ({ ...none, type: 'tool_call', toolName, action: 'allow', actionWord, latencyMs, occurredAt: at(i), format: 'gateway-line', tool: toolName });
    expect(items.map((e) => ({ ...mapped(e), tool: e.metadata.fields.tool }))).toEqual([
      start(0, 'get_me'),
      call(1, 'get_me', 312, 'ok'),
      start(2, 'create_issue'),
      call(3, 'create_issue', 1200, 'error'),
      start(4, 'search_code'),
      call(5, 'search_code', 123_500, 'failed'),
    ]);
    expect(items.map((e) => e.metadata.fields.event)).toEqual(['tool_call_start', 'tool_response', 'tool_call_start', 'tool_response', 'tool_call_start', 'tool_failure']);
    await check();
  });

  it('OpenTelemetry GenAI/MCP attributes: flat dotted keys, an attributes object, and an OTLP key/value list', async () => {
    const { items, check } = await ingest('gateways/otel-genai-mcp.jsonl');
    const call = { ...none, type: 'tool_call', toolName: 'get-weather', action: null, mcpMethod: 'tools/call', format: 'json' };
    expect(items.map(mapped)).toEqual([
      { ...call, sessionId: '8267461134f24305af708e66b8eda71a', toolCallId: 'call_mszuSIzqtI65i1wAUOE8w5H4', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', occurredAt: at(0) },
      { ...call, sessionId: '8267461134f24305af708e66b8eda71a', toolCallId: 'call_VSPygqKTWdrhaFErNvMV18Yl', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', occurredAt: at(1) },
      { ...call, sessionId: '191c4850af6c49e08843a3f6c80e5046', toolCallId: 'call_3xNqK9bA7c', traceId: '5b8efff798038103d269b633813fc60c', occurredAt: at(2) },
    ]);
    // error.type is kept with the fields; OpenTelemetry records no proxy decision, so there is no action to map.
    expect(items[1].metadata.fields.attributes['error.type']).toBe('tool_error');
    await check();
  });

  it('IBM ContextForge tool.invoke span: tool.name, duration.ms, success true|false', async () => {
    const { items, check } = await ingest('gateways/ibm-contextforge-spans.jsonl');
    expect(items.map(mapped)).toEqual([
      { ...none, type: 'tool_call', toolName: 'github_search', action: 'allow', actionWord: 'success=true', latencyMs: 235, occurredAt: at(0), format: 'json' },
      { ...none, type: 'tool_call', toolName: 'github_search', action: 'allow', actionWord: 'success=false', latencyMs: 1021, occurredAt: at(1), format: 'json' },
    ]);
    await check();
  });

  it('Tyk MCP access log: mcp_primitive_type/name, mcp_method, mcp_error_code -32002 as a denial; a resource read is no tool call', async () => {
    const { items, check } = await ingest('gateways/tyk-mcp-access-log.jsonl');
    expect(items.map(mapped)).toEqual([
      { ...none, type: 'tool_call', toolName: 'get_current_weather', action: null, mcpMethod: 'tools/call', occurredAt: at(0), format: 'json' },
      { ...none, type: 'tool_call', toolName: 'search_documents', action: 'deny', actionWord: 'mcp_error_code=-32002', mcpMethod: 'tools/call', occurredAt: at(1), format: 'json' },
      { ...none, type: 'log', toolName: null, action: null, mcpMethod: 'resources/read', occurredAt: at(2), format: 'json' },
    ]);
    await check();
  });

  it('MXCP audit log: type tool + name, policy_decision allow|deny|warn before status, duration_ms', async () => {
    const { items, check } = await ingest('gateways/mxcp-audit.jsonl');
    expect(items.map(mapped)).toEqual([
      { ...none, type: 'tool_call', toolName: 'my_sql_tool', action: 'allow', actionWord: 'allow', latencyMs: 145, occurredAt: at(0), format: 'json' },
      { ...none, type: 'tool_call', toolName: 'my_sql_tool', action: 'deny', actionWord: 'deny', latencyMs: 3, occurredAt: at(1), format: 'json' },
      { ...none, type: 'tool_call', toolName: 'export_report', action: 'flag', actionWord: 'warn', latencyMs: 870, occurredAt: at(2), format: 'json' },
    ]);
    await check();
  });

  it("Powertools for AWS Lambda (Python's and TypeScript's documented lines): the request id keys become metadata.traceId unless an X-Ray id is present", async () => {
    const py = await ingest('lambda/powertools-python.jsonl');
    expect(py.items.map((e) => [e.type, e.metadata.requestId, e.metadata.traceId, e.metadata.level])).toEqual([
      ['log', '52fdfc07-2182-154f-163f-5f0f9a621d72', '52fdfc07-2182-154f-163f-5f0f9a621d72', 'INFO'],
      ['log', '52fdfc07-2182-154f-163f-5f0f9a621d72', '52fdfc07-2182-154f-163f-5f0f9a621d72', 'INFO'],
      ['log', '899856cb-83d1-40d7-8611-9e78f15f32f4', '1-5759e988-bd862e3fe1be46a994272793', 'INFO'],
    ]);
    const ts = await ingest('lambda/powertools-typescript.jsonl');
    // Its xray_trace_id is the docs' placeholder, not an X-Ray id: the request id is the trace id.
    expect(ts.items.map((e) => [e.metadata.requestId, e.metadata.traceId])).toEqual([['c6af9ac6-7b61-11e6-9a41-93e812345678', 'c6af9ac6-7b61-11e6-9a41-93e812345678']]);
  });
});
