// OTLP/HTTP ingest with the OpenTelemetry JS SDK's own exporters (protobuf and JSON; traces and logs) against a listening server.
import { SpanKind } from '@opentelemetry/api';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, http, type TestOrg } from '../../helpers/app.js';
import { suiteApp } from '../../helpers/suite-app.js';
import { backendNames } from '../../helpers/backends.js';
import { storedEvents, type StoredEvent } from '../ingest-kit.js';
import { exportLogs, exportSpans, hexId, makeLogRecords, makeSpans, OTLP_BASE, type SpanSpec } from './otlp-kit.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const KONG_LINE =
  '{"ai":{"mcp":{"mcp_session_id":"kong-sess-1","rpc":[{"method":"tools/call","latency":6,"id":"2","tool_name":"list_orders"}],"audit":[{"primitive_name":"list_orders","scope":"primitive","primitive":"tool","action":"allow"}]}}}';

/** One of each span shape the mapping knows, plus spans that are not tool calls. */
function spanSpecs(tag: string): SpanSpec[] {
  return [
    {
      name: 'tools/call get_weather',
      kind: SpanKind.SERVER,
      start: T0,
      end: T0 + 42,
      attributes: {
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'get_weather',
        'mcp.session.id': `sess-${tag}`,
        'gen_ai.tool.call.id': `call-${tag}`,
        'mcp.protocol.version': '2025-06-18',
        'jsonrpc.request.id': 7,
      },
    },
    {
      name: 'tools/call search_docs',
      kind: SpanKind.CLIENT,
      start: T0 + 1000,
      end: T0 + 1250,
      error: 'tool failed',
      attributes: { 'mcp.method.name': 'tools/call', 'server.address': 'mcp.example.com', 'server.port': 8443, 'gen_ai.conversation.id': `conv-${tag}`, 'error.type': 'tool_error' },
    },
    {
      name: 'execute_tool delete_file',
      kind: SpanKind.INTERNAL,
      start: T0 + 2000,
      end: T0 + 2005,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'audit.action': 'blocked', 'mcp.session.id': `sess-${tag}` },
    },
    { name: 'GET /health', kind: SpanKind.SERVER, start: T0, end: T0 + 1, attributes: { 'http.request.method': 'GET' } },
    { name: 'tools/list', kind: SpanKind.SERVER, start: T0, end: T0 + 1, attributes: { 'mcp.method.name': 'tools/list' } },
  ];
}

const RESOURCE = { 'service.name': 'weather-mcp', 'service.version': '1.2.3', 'deployment.environment.name': 'test' };

describe.each(backendNames.slice(-1))('OTLP/HTTP with the OpenTelemetry JS exporters (%s backend)', (backendName) => {
  const { app } = suiteApp(backendName, { OTLP_MAX_SPANS_PER_EXPORT: '50' });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  const otlpEvents = async () => storedEvents(app.url, org.key, '&source=otlp');

  it('protobuf traces, configured by OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS: tool-call spans stored field by field, others not; a retry stores nothing new', async () => {
    const saved = { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, headers: process.env.OTEL_EXPORTER_OTLP_HEADERS };
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `${app.url}${OTLP_BASE}`;
    process.env.OTEL_EXPORTER_OTLP_HEADERS = `Authorization=Bearer%20${org.key}`;
    const exporter = new ProtoTraceExporter();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = saved.endpoint;
    process.env.OTEL_EXPORTER_OTLP_HEADERS = saved.headers;
    if (saved.endpoint === undefined) delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    if (saved.headers === undefined) delete process.env.OTEL_EXPORTER_OTLP_HEADERS;

    const spans = await makeSpans(RESOURCE, spanSpecs('proto'));
    const notToolCalls = async () => (await app.ctx.metrics.ingestEvents.get()).values.find((v) => v.labels.source === 'otlp' && v.labels.outcome === 'not_tool_call')?.value ?? 0;
    const before = await notToolCalls();
    expect(await exportSpans(exporter, spans)).toEqual({ code: 0 });
    const stored = await otlpEvents();
    expect(stored).toHaveLength(3);
    const byTool = new Map(stored.map((e) => [e.toolName, e]));
    const server = byTool.get('get_weather')!;
    const serverSpan = spans.find((s) => s.name === 'tools/call get_weather')!;
    expect(server).toMatchObject({
      type: 'tool_call',
      source: 'otlp',
      serverId: 'weather-mcp',
      sessionId: 'sess-proto',
      action: 'allow',
      latencyMs: 42,
      occurredAt: new Date(T0).toISOString(),
    });
    expect(server.metadata).toMatchObject({
      traceId: serverSpan.spanContext().traceId,
      spanId: serverSpan.spanContext().spanId,
      spanName: 'tools/call get_weather',
      spanKind: 'server',
      status: { code: 'unset' },
      toolCallId: 'call-proto',
      mcpMethod: 'tools/call',
      mcpProtocolVersion: '2025-06-18',
      source_detail: 'weather-mcp',
      resource: RESOURCE,
      scope: { name: 'otlp-test', version: '1.0.0' },
      attributes: { 'gen_ai.tool.call.id': 'call-proto', 'mcp.protocol.version': '2025-06-18', 'jsonrpc.request.id': 7 },
    });

    const client = byTool.get('search_docs')!;
    expect(client).toMatchObject({ serverId: 'mcp.example.com:8443', sessionId: 'conv-proto', latencyMs: 250, action: 'allow' });
    expect(client.metadata).toMatchObject({ spanKind: 'client', status: { code: 'error', message: 'tool failed' }, errorType: 'tool_error' });

    const internal = byTool.get('delete_file')!;
    // The policy attribute decides; without server.address an internal span names no server.
    expect(internal).toMatchObject({ serverId: null, sessionId: 'sess-proto', action: 'deny', latencyMs: 5 });
    expect(internal.metadata.actionWord).toBe('blocked');

    expect((await notToolCalls()) - before).toBe(2);

    // The exporter's retry: the same export again stores nothing new.
    expect(await exportSpans(exporter, spans)).toEqual({ code: 0 });
    expect(await otlpEvents()).toHaveLength(3);
    await exporter.shutdown();
  });

  it('JSON traces (hex ids, string times): the same mapping; a retry stores nothing new', async () => {
    const exporter = new JsonTraceExporter({ url: `${app.url}${OTLP_BASE}/v1/traces`, headers: bearer(org.key) });
    const before = (await otlpEvents()).length;
    const spans = await makeSpans({ 'service.name': 'json-mcp' }, spanSpecs('json'));
    expect(await exportSpans(exporter, spans)).toEqual({ code: 0 });
    expect(await exportSpans(exporter, spans)).toEqual({ code: 0 });
    const added = (await otlpEvents()).slice(before);
    expect(added.map((e) => [e.toolName, e.serverId, e.sessionId, e.latencyMs, e.action]).sort()).toEqual(
      [
        ['delete_file', null, 'sess-json', 5, 'deny'],
        ['get_weather', 'json-mcp', 'sess-json', 42, 'allow'],
        ['search_docs', 'mcp.example.com:8443', 'conv-json', 250, 'allow'],
      ].sort(),
    );
    const serverSpan = spans.find((s) => s.name === 'tools/call get_weather')!;
    const server = added.find((e) => e.toolName === 'get_weather')!;
    expect([server.metadata.traceId, server.metadata.spanId]).toEqual([serverSpan.spanContext().traceId, serverSpan.spanContext().spanId]);
    expect(server.metadata.startTimeUnixNano).toBe(`${T0}000000`);
    await exporter.shutdown();
  });

  it.each([
    ['protobuf', ProtoLogExporter],
    ['JSON', JsonLogExporter],
  ] as const)('%s logs: a record with tool-call keys maps like a span; a JSON access log is read as from CloudWatch; records without ids are new each time', async (_name, Exporter) => {
    const exporter = new Exporter({ url: `${app.url}${OTLP_BASE}/v1/logs`, headers: bearer(org.key) });
    const before = (await otlpEvents()).length;
    const traceId = hexId(16);
    const spanId = hexId(8);
    const records = await makeLogRecords({ 'service.name': 'gateway' }, [
      {
        body: 'tool call finished',
        severityNumber: 9,
        severityText: 'INFO',
        timestamp: T0 + 5000,
        spanContext: { traceId, spanId },
        attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'lookup', 'mcp.session.id': 'log-sess', 'audit.action': 'redact' },
      },
      { body: KONG_LINE, severityNumber: 17, severityText: 'ERROR', timestamp: T0 + 6000, spanContext: { traceId, spanId } },
      { body: 'plain line with no identity', severityText: 'WARN', timestamp: T0 + 7000 },
    ]);
    expect(await exportLogs(exporter, records)).toEqual({ code: 0 });
    expect(await exportLogs(exporter, records)).toEqual({ code: 0 });
    const added: StoredEvent[] = (await otlpEvents()).slice(before);
    // Two records have an identity (trace + span + time + position), the one without is stored on each export.
    expect(added).toHaveLength(4);
    const tool = added.find((e) => e.toolName === 'lookup')!;
    expect(tool).toMatchObject({ type: 'tool_call', serverId: 'gateway', sessionId: 'log-sess', action: 'redact', latencyMs: null, occurredAt: new Date(T0 + 5000).toISOString() });
    expect(tool.metadata).toMatchObject({ traceId, spanId, level: 'INFO', message: 'tool call finished', otlp: { severityNumber: 9, severityText: 'INFO' } });
    const kong = added.find((e) => e.toolName === 'list_orders')!;
    expect(kong).toMatchObject({ type: 'tool_call', sessionId: 'kong-sess-1', action: 'allow', latencyMs: 6, occurredAt: new Date(T0 + 6000).toISOString() });
    expect(kong.metadata).toMatchObject({ traceId, level: 'ERROR', format: 'json', source_detail: 'gateway', otlp: { traceId, spanId, severityText: 'ERROR', severityNumber: 17 } });
    const plain = added.filter((e) => e.metadata.message === 'plain line with no identity');
    expect(plain).toHaveLength(2);
    expect(plain[0]).toMatchObject({ type: 'log', toolName: null, action: null });
    expect(plain[0].metadata.level).toBe('WARN');
    await exporter.shutdown();
  });

  it('a tool-call span without a span id is rejected in partial_success (JSON answer), the rest is stored', async () => {
    const traceId = hexId(16);
    const span = (spanId: string, tool: string) => ({
      traceId,
      spanId,
      name: `tools/call ${tool}`,
      kind: 2,
      startTimeUnixNano: `${T0}000000`,
      endTimeUnixNano: `${T0 + 3}000000`,
      attributes: [{ key: 'mcp.method.name', value: { stringValue: 'tools/call' } }],
    });
    const body = { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'partial' } }] }, scopeSpans: [{ spans: [span(hexId(8), 'kept'), span('', 'no_id')] }] }] };
    const r = await http(`${app.url}${OTLP_BASE}/v1/traces`, { method: 'POST', headers: bearer(org.key), json: body });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.partialSuccess.rejectedSpans).toBe('1');
    expect(r.body.partialSuccess.errorMessage).toMatch(/span id/);
    const stored = await otlpEvents();
    expect(stored.filter((e) => e.serverId === 'partial').map((e) => [e.toolName, e.latencyMs])).toEqual([['kept', 3]]);
  });

  it('an export of more spans than OTLP_MAX_SPANS_PER_EXPORT is a 413 the exporter reports (and does not retry); nothing of it is stored', async () => {
    const exporter = new ProtoTraceExporter({ url: `${app.url}${OTLP_BASE}/v1/traces`, headers: bearer(org.key) });
    const before = (await otlpEvents()).length;
    const specs = Array.from({ length: 51 }, (_, i) => ({ ...spanSpecs('big')[0], attributes: { ...spanSpecs('big')[0].attributes, 'gen_ai.tool.name': `t${i}` } }));
    const result = await exportSpans(exporter, await makeSpans(RESOURCE, specs));
    expect(result.code).toBe(1);
    expect((result.error as Error & { code?: number }).code).toBe(413);
    expect(await otlpEvents()).toHaveLength(before);
    await exporter.shutdown();
  });
});
