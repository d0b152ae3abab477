// Storage outage during OTLP export: 503 with Retry-After and a google.rpc.Status; the real exporter's retry lands once.
import { SpanKind } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOtlpTypes } from '../../src/ingest/otlp/proto-types.js';
import { bearer, createOrg, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { storedEvents } from '../ingest/ingest-kit.js';
import { exportSpans, makeSpans, OTLP_BASE } from '../ingest/otlp/otlp-kit.js';
import { until } from './checker.js';
import { redisPrefix } from './processes.js';

const types = loadOtlpTypes();
const PROTO = 'application/x-protobuf';

describe.runIf(realBackendAvailable)('OTLP export while Postgres is unreachable', () => {
  let db: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let app: RunningApp;
  let org: TestOrg;

  beforeAll(async () => {
    db = await createTestDatabase();
    const target = new URL(db.url);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const via = new URL(db.url);
    via.hostname = '127.0.0.1';
    via.port = String(proxy.port);
    app = await startApp({ DATABASE_URL: via.toString(), REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: redisPrefix('otlp-outage') });
    org = await createOrg(app.url);
  });
  afterAll(async () => {
    await app?.close();
    await proxy?.close();
    await db?.drop();
  });

  const otlp503s = async () => (await app.ctx.metrics.ingestRequests.get()).values.find((v) => v.labels.source === 'otlp' && v.labels.status === '503')?.value ?? 0;

  it('answers 503 + Retry-After (UNAVAILABLE, in the request encoding); the exporter retries after the outage and its spans are stored once', async () => {
    const spans = await makeSpans({ 'service.name': 'outage-mcp' }, [
      { name: 'tools/call during_outage', kind: SpanKind.SERVER, start: Date.now(), end: Date.now() + 12, attributes: { 'mcp.method.name': 'tools/call', 'mcp.session.id': 'outage-sess' } },
    ]);
    proxy.cut();
    try {
      const exporter = new OTLPTraceExporter({ url: `${app.url}${OTLP_BASE}/v1/traces`, headers: bearer(org.key), timeoutMillis: 30_000 });
      const before = await otlp503s();
      const result = exportSpans(exporter, spans);
      const json = await fetch(`${app.url}${OTLP_BASE}/v1/traces`, { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'application/json' }, body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'tools/call probe', attributes: [{ key: 'mcp.method.name', value: { stringValue: 'tools/call' } }] }] }] }] }) });
      expect(json.status).toBe(503);
      expect(Number(json.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await json.json()).toMatchObject({ code: 14, message: expect.stringMatching(/unavailable/) });
      const proto = await fetch(`${app.url}${OTLP_BASE}/v1/traces`, { method: 'POST', headers: { ...bearer(org.key), 'content-type': PROTO }, body: new Uint8Array(spansBody()) });
      expect(proto.status).toBe(503);
      expect(proto.headers.get('content-type')).toBe(PROTO);
      expect(types.status.toObject(types.status.decode(Buffer.from(await proto.arrayBuffer())))).toMatchObject({ code: 14 });
      // The exporter's first attempt has been refused too before storage comes back.
      await until('the exporter to be answered 503', async () => (await otlp503s()) >= before + 3);
      proxy.restore();
      expect(await result).toEqual({ code: 0 });
      await exporter.shutdown();
    } finally {
      proxy.restore();
    }
    const stored = (await storedEvents(app.url, org.key, '&source=otlp')).filter((e) => e.toolName === 'during_outage');
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ sessionId: 'outage-sess', serverId: 'outage-mcp', latencyMs: 12 });
    // Sent again (as an exporter would after a lost answer): nothing new.
    const again = new OTLPTraceExporter({ url: `${app.url}${OTLP_BASE}/v1/traces`, headers: bearer(org.key) });
    expect(await exportSpans(again, spans)).toEqual({ code: 0 });
    await again.shutdown();
    expect((await storedEvents(app.url, org.key, '&source=otlp')).filter((e) => e.toolName === 'during_outage')).toHaveLength(1);
  });
});

/** A protobuf export with one tool-call span. */
function spansBody(): Buffer {
  const t = types.traceRequest;
  const span = { traceId: Buffer.from('6b8efff798038103d269b633813fc60c', 'hex'), spanId: Buffer.from('fee19b7ec3c1b174', 'hex'), name: 'tools/call probe', attributes: [{ key: 'mcp.method.name', value: { stringValue: 'tools/call' } }] };
  return Buffer.from(t.encode(t.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] })).finish());
}
