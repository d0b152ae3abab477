// OTLP/gRPC ingest with the OpenTelemetry JS gRPC exporters against a listening receiver: stored like OTLP/HTTP, and refused per the OTLP spec.
import { Metadata, credentials, status as GrpcStatus, makeGenericClientConstructor } from '@grpc/grpc-js';
import { SpanKind } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOrg, type TestOrg } from '../../helpers/app.js';
import { backendNames } from '../../helpers/backends.js';
import { suiteApp } from '../../helpers/suite-app.js';
import { ingestedEvents as storedEvents } from '../ingest-kit.js';
import { exportLogs, exportSpans, makeLogRecords, makeSpans } from '../otlp/otlp-kit.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');

describe.each(backendNames.slice(-1))('OTLP/gRPC receiver (%s backend)', (backendName) => {
  const { app } = suiteApp(backendName, { OTLP_GRPC_PORT: '0', OTLP_MAX_SPANS_PER_EXPORT: '5' });
  let org: TestOrg;
  let url: string;

  beforeAll(async () => {
    org = await createOrg(app.url);
    url = `http://127.0.0.1:${app.ctx.otlpGrpcPort()}`;
  });

  const metadataWith = (key: string) => {
    const m = new Metadata();
    m.set('authorization', `Bearer ${key}`);
    return m;
  };

  it('stores a tool-call span sent by the gRPC trace exporter, deduplicated on a resend', async () => {
    const exporter = new OTLPTraceExporter({ url, metadata: metadataWith(org.key) });
    const spans = await makeSpans({ 'service.name': 'weather-mcp' }, [
      { name: 'tools/call get_weather', kind: SpanKind.SERVER, start: T0, end: T0 + 42, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'get_weather', 'mcp.session.id': 'grpc-sess' } },
      { name: 'GET /health', kind: SpanKind.SERVER, start: T0, end: T0 + 1, attributes: {} },
    ]);
    expect(await exportSpans(exporter, spans)).toEqual({ code: 0 });
    expect(await exportSpans(exporter, spans)).toEqual({ code: 0 });
    await exporter.shutdown();
    const items = await storedEvents(app.url, org.key);
    expect(items.map((e) => [e.type, e.source, e.toolName, e.sessionId, e.serverId, e.latencyMs, e.occurredAt])).toEqual([
      ['tool_call', 'otlp', 'get_weather', 'grpc-sess', 'weather-mcp', 42, new Date(T0).toISOString()],
    ]);
  });

  it('stores log records sent by the gRPC logs exporter', async () => {
    const other = await createOrg(app.url);
    const exporter = new OTLPLogExporter({ url, metadata: metadataWith(other.key) });
    const records = await makeLogRecords({ 'service.name': 'gateway' }, [{ timestamp: T0, body: '{"tool":"search","action":"deny","session_id":"s-9"}' }]);
    expect(await exportLogs(exporter, records)).toEqual({ code: 0 });
    await exporter.shutdown();
    const items = await storedEvents(app.url, other.key);
    expect(items.map((e) => [e.type, e.toolName, e.action, e.sessionId])).toEqual([['tool_call', 'search', 'deny', 's-9']]);
  });

  /** A raw unary call, to read the exact status code and trailers the exporters only summarize. */
  function rawExport(body: Buffer, key: string | null): Promise<{ code: number; details: string; metadata?: Metadata }> {
    const Client = makeGenericClientConstructor(
      { Export: { path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export', requestStream: false, responseStream: false, requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b } },
      'TraceService',
    );
    const client = new Client(url.replace('http://', ''), credentials.createInsecure());
    const md = key === null ? new Metadata() : metadataWith(key);
    return new Promise((resolve) => {
      (client as unknown as { Export: (b: Buffer, m: Metadata, cb: (err: { code: number; details: string; metadata?: Metadata } | null) => void) => void }).Export(body, md, (err) => {
        client.close();
        resolve(err ? { code: err.code, details: err.details, metadata: err.metadata } : { code: GrpcStatus.OK, details: '' });
      });
    });
  }

  it('answers UNAUTHENTICATED without a key, INVALID_ARGUMENT for bytes that do not decode, PERMISSION_DENIED without ingest:write', async () => {
    expect((await rawExport(Buffer.alloc(0), null)).code).toBe(GrpcStatus.UNAUTHENTICATED);
    expect((await rawExport(Buffer.alloc(0), 'ask_not-a-real-key')).code).toBe(GrpcStatus.UNAUTHENTICATED);
    const bad = await rawExport(Buffer.from([0x0a, 0xff, 0xff, 0xff]), org.key);
    expect(bad.code).toBe(GrpcStatus.INVALID_ARGUMENT);
    const reader = await createOrg(app.url, { scopes: ['events:read'] });
    expect((await rawExport(Buffer.alloc(0), reader.key)).code).toBe(GrpcStatus.PERMISSION_DENIED);
    expect((await rawExport(Buffer.alloc(0), org.key)).code).toBe(GrpcStatus.OK);
  });

  it('refuses an export over OTLP_MAX_SPANS_PER_EXPORT with INVALID_ARGUMENT, storing none of it', async () => {
    const fresh = await createOrg(app.url);
    const exporter = new OTLPTraceExporter({ url, metadata: metadataWith(fresh.key) });
    const spans = await makeSpans(
      { 'service.name': 'weather-mcp' },
      Array.from({ length: 6 }, (_, i) => ({ name: `tools/call t${i}`, kind: SpanKind.SERVER, start: T0, end: T0 + 1, attributes: { 'mcp.method.name': 'tools/call' } })),
    );
    const result = await exportSpans(exporter, spans);
    await exporter.shutdown();
    expect(result.code).toBe(1);
    expect(String(result.error?.message)).toMatch(/OTLP_MAX_SPANS_PER_EXPORT/);
    expect(await storedEvents(app.url, fresh.key)).toEqual([]);
  });
});
