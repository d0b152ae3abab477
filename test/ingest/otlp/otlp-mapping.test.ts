// The OTLP mapping table (docs/ingestion-otlp.md), field by field, on the pure span and log-record mapping.
import { describe, expect, it } from 'vitest';
import { contextOf, MAX_RESOURCE_ATTRIBUTES_BYTES, resourceOf, type LogItem, type SpanItem } from '../../../src/ingest/otlp/model.js';
import { logToEvent, spansToEvents, spanToEvent } from '../../../src/ingest/otlp/to-events.js';

const receivedAt = new Date('2026-03-02T00:00:00.000Z');
const MS = 1_000_000n;
const T0 = BigInt(Date.parse('2026-03-01T10:00:00.000Z')) * MS;

/** What an item's resource and scope are given as in these tests. */
interface ContextSpec {
  resource?: Record<string, unknown>;
  scope?: { name?: string; version?: string };
}

function span(over: Partial<SpanItem> & ContextSpec = {}): SpanItem & { traceId: string; spanId: string } {
  const { resource, scope, ...rest } = over;
  return {
    context: contextOf(resourceOf(resource ?? {}), scope ?? {}),
    traceId: '5b8efff798038103d269b633813fc60c',
    spanId: 'eee19b7ec3c1b174',
    parentSpanId: null,
    name: 'tools/call x',
    kind: 2,
    startNs: T0,
    endNs: T0 + 7n * MS,
    attributes: { 'mcp.method.name': 'tools/call' },
    status: { code: 0, message: null },
    ...rest,
  } as SpanItem & { traceId: string; spanId: string };
}

function log(over: Partial<LogItem> & ContextSpec = {}): LogItem {
  const { resource, scope, ...rest } = over;
  const context = contextOf(resourceOf(resource ?? {}), scope ?? {});
  return { context, timeNs: T0, observedNs: null, severityNumber: null, severityText: null, body: null, attributes: {}, traceId: null, spanId: null, eventName: null, ...rest };
}

describe('OTLP span mapping', () => {
  it('toolName: gen_ai.tool.name, else Traceloop entity name, else the span-name target', () => {
    expect(spanToEvent(span({ attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'named' }, name: 'tools/call other' }), { receivedAt }).toolName).toBe('named');
    expect(spanToEvent(span({ attributes: { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'entity' }, name: 'entity.tool' }), { receivedAt }).toolName).toBe('entity');
    expect(spanToEvent(span({ attributes: { 'gen_ai.operation.name': 'execute_tool' }, name: 'execute_tool  get_weather ' }), { receivedAt }).toolName).toBe('get_weather');
    expect(spanToEvent(span({ attributes: { 'traceloop.span.kind': 'tool' }, name: 'lookup.tool' }), { receivedAt }).toolName).toBe('lookup');
    const nameless = spanToEvent(span({ name: 'tools/call' }), { receivedAt });
    expect([nameless.type, nameless.toolName]).toEqual(['log', null]);
  });

  it('sessionId: span mcp.session.id, then gen_ai.conversation.id, then the resource mcp.session.id', () => {
    const s = (attributes: Record<string, unknown>, resource: Record<string, unknown> = {}) => spanToEvent(span({ attributes: { 'mcp.method.name': 'tools/call', ...attributes }, resource }), { receivedAt }).sessionId;
    expect(s({ 'mcp.session.id': 'a', 'gen_ai.conversation.id': 'b' }, { 'mcp.session.id': 'c' })).toBe('a');
    expect(s({ 'gen_ai.conversation.id': 'b' }, { 'mcp.session.id': 'c' })).toBe('b');
    expect(s({}, { 'mcp.session.id': 'c' })).toBe('c');
    expect(s({})).toBeNull();
  });

  it('serverId: server spans take the resource service.name, then server.address:port; other spans server.address only', () => {
    const s = (kind: number, attributes: Record<string, unknown>, resource: Record<string, unknown>) => spanToEvent(span({ kind, attributes: { 'mcp.method.name': 'tools/call', ...attributes }, resource }), { receivedAt }).serverId;
    expect(s(2, { 'server.address': 'h', 'server.port': 1 }, { 'service.name': 'svc' })).toBe('svc');
    expect(s(2, { 'server.address': 'h', 'server.port': 1 }, {})).toBe('h:1');
    expect(s(3, { 'server.address': 'h' }, { 'service.name': 'caller' })).toBe('h');
    expect(s(1, {}, { 'service.name': 'caller' })).toBeNull();
  });

  it('action: audit.action mapped; unknown word null + rawAction; else allow when the span ended, null when it did not; never from the status', () => {
    const e = (attributes: Record<string, unknown>, over: Partial<SpanItem> & ContextSpec = {}) => spanToEvent(span({ attributes: { 'mcp.method.name': 'tools/call', ...attributes }, ...over }), { receivedAt });
    expect(e({ 'audit.action': 'redacted' }).action).toBe('redact');
    const odd = e({ 'audit.action': 'quarantine' });
    expect([odd.action, odd.metadata?.rawAction]).toEqual([null, 'quarantine']);
    expect(e({}, { status: { code: 2, message: 'boom' } }).action).toBe('allow');
    expect(e({}, { endNs: null }).action).toBeNull();
  });

  it('latencyMs and timestamp: end − start in whole ms, start time; null latency and receive time when missing', () => {
    const ok = spanToEvent(span({ endNs: T0 + 1_499_999n }), { receivedAt });
    expect([ok.latencyMs, ok.occurredAt.toISOString()]).toEqual([1, '2026-03-01T10:00:00.000Z']);
    const backwards = spanToEvent(span({ endNs: T0 - MS }), { receivedAt });
    expect(backwards.latencyMs).toBeNull();
    const noStart = spanToEvent(span({ startNs: null }), { receivedAt });
    expect([noStart.latencyMs, noStart.occurredAt]).toEqual([null, receivedAt]);
  });

  it('metadata: ids, status, well-known attributes, all attributes, bounded resource, scope; identity trace + span id', () => {
    const big = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, 'v'.repeat(100)]));
    const e = spanToEvent(
      span({
        attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.call.id': 'c1', 'mcp.protocol.version': '2025-06-18', 'error.type': 'timeout', other: 1 },
        resource: { 'service.name': 'svc', ...big },
        scope: { name: 'lib', version: '2' },
        status: { code: 2, message: 'boom' },
        parentSpanId: '1111111111111111',
      }),
      { receivedAt },
    );
    expect(e.dedupeKey).toBe('otlp:span:5b8efff798038103d269b633813fc60c:eee19b7ec3c1b174');
    expect(e.metadata).toMatchObject({
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      parentSpanId: '1111111111111111',
      spanKind: 'server',
      status: { code: 'error', message: 'boom' },
      toolCallId: 'c1',
      mcpProtocolVersion: '2025-06-18',
      errorType: 'timeout',
      mcpMethod: 'tools/call',
      attributes: { other: 1, 'error.type': 'timeout' },
      scope: { name: 'lib', version: '2' },
      source_detail: 'svc',
    });
    expect(JSON.stringify(e.metadata!.resource).length).toBeLessThanOrEqual(MAX_RESOURCE_ATTRIBUTES_BYTES);
    expect((e.metadata!.resource as Record<string, unknown>)['service.name']).toBe('svc');
    expect(e.metadata!.resourceAttributesOmitted).toBeGreaterThan(0);
  });

  it('spansToEvents: non-tool spans counted, tool spans without ids rejected', () => {
    const out = spansToEvents([span(), span({ attributes: { 'http.method': 'GET' } }), span({ spanId: null } as Partial<SpanItem>)], { receivedAt });
    expect([out.events.length, out.notToolCalls, out.rejected]).toEqual([1, 1, 1]);
  });
});

describe('OTLP log-record mapping', () => {
  it('tool-call keys map like a span (action only when explicit), identity trace + span + times + position', () => {
    const e = logToEvent(log({ attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 't', 'gen_ai.conversation.id': 'conv' }, resource: { 'service.name': 'svc' }, traceId: 'a'.repeat(32), spanId: 'b'.repeat(16) }), 3, { receivedAt });
    expect(e).toMatchObject({ type: 'tool_call', toolName: 't', sessionId: 'conv', serverId: 'svc', action: null, latencyMs: null });
    expect(e.dedupeKey).toBe(`otlp:log:${'a'.repeat(32)}:${'b'.repeat(16)}:${T0}:0:3`);
  });

  it('other records: normalized like a CloudWatch line, keeping severity and ids; no identity means a fresh key each time', () => {
    const body = { stringValue: 'tool=search action=blocked session=s1 latency_ms=12' };
    const a = logToEvent(log({ body, severityText: 'WARN', severityNumber: 13 }), 0, { receivedAt });
    const b = logToEvent(log({ body, severityText: 'WARN', severityNumber: 13 }), 0, { receivedAt });
    expect(a).toMatchObject({ type: 'tool_call', toolName: 'search', action: 'deny', sessionId: 's1', latencyMs: 12 });
    expect(a.metadata).toMatchObject({ level: 'WARN', format: 'logfmt', otlp: { severityNumber: 13, severityText: 'WARN' } });
    expect(a.dedupeKey).not.toBe(b.dedupeKey);
  });
});
