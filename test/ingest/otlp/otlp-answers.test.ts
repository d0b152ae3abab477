// OTLP/HTTP answers for bad input and limits: google.rpc.Status bodies in the request's encoding, never a 5xx.
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadOtlpTypes } from '../../../src/ingest/otlp/proto-types.js';
import { TOO_DEEP } from '../../../src/ingest/otlp/attributes.js';
import { bearer, createOrg, type TestOrg } from '../../helpers/app.js';
import { suiteApp } from '../../helpers/suite-app.js';
import { storedEvents } from '../ingest-kit.js';
import { hexId, OTLP_BASE } from './otlp-kit.js';

const types = loadOtlpTypes();
const PROTO = 'application/x-protobuf';

interface Answer {
  status: number;
  type: string | null;
  retryAfter: string | null;
  bytes: Buffer;
}

/** A traces export with one tool-call span whose attribute `nested` holds `depth` levels of arrays. */
function traceRequest(opts: { tool?: string; depth?: number; spans?: number } = {}): Record<string, unknown> {
  let value: Record<string, unknown> = { stringValue: 'leaf' };
  for (let i = 0; i < (opts.depth ?? 0); i++) value = { arrayValue: { values: [value] } };
  const spans = Array.from({ length: opts.spans ?? 1 }, () => ({
    traceId: Buffer.from(hexId(16), 'hex'),
    spanId: Buffer.from(hexId(8), 'hex'),
    name: `tools/call ${opts.tool ?? 'answer_test'}`,
    kind: 2,
    startTimeUnixNano: '1772359200000000000',
    endTimeUnixNano: '1772359200010000000',
    attributes: [
      { key: 'mcp.method.name', value: { stringValue: 'tools/call' } },
      { key: 'nested', value },
    ],
  }));
  return { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'answers' } }] }, scopeSpans: [{ spans }] }] };
}

function protoBytes(type: protobuf.Type, value: Record<string, unknown>): Buffer {
  return Buffer.from(type.encode(type.fromObject(value)).finish());
}

describe('OTLP/HTTP answers', () => {
  const { app } = suiteApp('embedded', { BODY_LIMIT_BYTES: String(256 * 1024), OTLP_MAX_LOG_RECORDS_PER_EXPORT: '3' });
  let org: TestOrg;
  let readOnly: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
    readOnly = await createOrg(app.url, { scopes: ['events:read'] });
  });

  async function post(signal: 'traces' | 'logs', body: Uint8Array | string, headers: Record<string, string>, key: string | null = org.key): Promise<Answer> {
    const res = await fetch(`${app.url}${OTLP_BASE}/v1/${signal}`, { method: 'POST', headers: { ...(key ? bearer(key) : {}), ...headers }, body: typeof body === 'string' ? body : new Uint8Array(body) });
    return { status: res.status, type: res.headers.get('content-type'), retryAfter: res.headers.get('retry-after'), bytes: Buffer.from(await res.arrayBuffer()) };
  }

  const protoStatus = (a: Answer) => types.status.toObject(types.status.decode(a.bytes)) as { code: number; message: string };

  it('a protobuf export answers 200 with an empty ExportTraceServiceResponse in protobuf; an empty body is an empty export', async () => {
    const a = await post('traces', protoBytes(types.traceRequest, traceRequest()), { 'content-type': PROTO });
    expect(a.status).toBe(200);
    expect(a.type).toBe(PROTO);
    expect(types.traceResponse.toObject(types.traceResponse.decode(a.bytes))).toEqual({});
    const empty = await post('logs', new Uint8Array(0), { 'content-type': PROTO });
    expect([empty.status, empty.bytes.length]).toEqual([200, 0]);
  });

  it('gzip per Content-Encoding is inflated', async () => {
    const a = await post('traces', gzipSync(protoBytes(types.traceRequest, traceRequest({ tool: 'gzipped' }))), { 'content-type': PROTO, 'content-encoding': 'gzip' });
    expect(a.status).toBe(200);
    expect((await storedEvents(app.url, org.key, '&source=otlp')).some((e) => e.toolName === 'gzipped')).toBe(true);
  });

  it('malformed protobuf is a 400 with a google.rpc.Status (INVALID_ARGUMENT) in protobuf', async () => {
    for (const bytes of [Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff]), Buffer.from('not protobuf at all, just text'), Buffer.from([0x0a, 0x05, 0x0a])]) {
      const a = await post('traces', bytes, { 'content-type': PROTO });
      expect(a.status).toBe(400);
      expect(a.type).toBe(PROTO);
      expect(protoStatus(a)).toMatchObject({ code: 3, message: expect.stringMatching(/not a valid protobuf traces export request/) });
    }
  });

  it('malformed or wrongly shaped JSON is a 400 with a JSON google.rpc.Status', async () => {
    for (const body of ['{"resourceSpans": [', '[1,2]', '{"resourceSpans": "nope"}', '{"resourceSpans":[1]}']) {
      const res = await fetch(`${app.url}${OTLP_BASE}/v1/traces`, { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'application/json' }, body });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ code: 3, message: expect.any(String) });
    }
  });

  it('another content type is a 415 (Status in protobuf); an unknown Content-Encoding too', async () => {
    const a = await post('traces', 'hello', { 'content-type': 'text/plain' });
    expect(a.status).toBe(415);
    expect(protoStatus(a)).toMatchObject({ code: 3, message: expect.stringMatching(/Content-Type text\/plain/) });
    const b = await post('traces', protoBytes(types.traceRequest, traceRequest()), { 'content-type': PROTO, 'content-encoding': 'br' });
    expect(b.status).toBe(415);
  });

  it('a gzip bomb stops at BODY_LIMIT_BYTES (413); corrupt gzip is a 400', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    const a = await post('traces', bomb, { 'content-type': PROTO, 'content-encoding': 'gzip' });
    expect(a.status).toBe(413);
    expect(protoStatus(a).code).toBe(3);
    const corrupt = Buffer.from(gzipSync(protoBytes(types.traceRequest, traceRequest())).subarray(0, 20));
    const c = await post('traces', corrupt, { 'content-type': PROTO, 'content-encoding': 'gzip' });
    expect(c.status).toBe(400);
  });

  it('more log records than OTLP_MAX_LOG_RECORDS_PER_EXPORT is a 413 naming the setting, in JSON', async () => {
    const logRecords = Array.from({ length: 4 }, (_, i) => ({ body: { stringValue: `line ${i}` } }));
    const res = await fetch(`${app.url}${OTLP_BASE}/v1/logs`, {
      method: 'POST',
      headers: { ...bearer(org.key), 'content-type': 'application/json' },
      body: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords }] }] }),
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 3, message: expect.stringMatching(/OTLP_MAX_LOG_RECORDS_PER_EXPORT/) });
  });

  it('credentials: none is a 401 (UNAUTHENTICATED), a key without ingest:write a 403 (PERMISSION_DENIED)', async () => {
    const body = protoBytes(types.traceRequest, traceRequest());
    const a = await post('traces', body, { 'content-type': PROTO }, null);
    expect([a.status, protoStatus(a).code]).toEqual([401, 16]);
    const b = await post('traces', body, { 'content-type': PROTO }, readOnly.key);
    expect([b.status, protoStatus(b).code]).toEqual([403, 7]);
  });

  it('attribute values nested deeper than 32 levels are cut with a marker; deeper than the decoder allows (100) is a 400', async () => {
    const a = await post('traces', protoBytes(types.traceRequest, traceRequest({ tool: 'deep', depth: 40 })), { 'content-type': PROTO });
    expect(a.status).toBe(200);
    const stored = (await storedEvents(app.url, org.key, '&source=otlp')).find((e) => e.toolName === 'deep')!;
    expect(JSON.stringify(stored.metadata.attributes.nested)).toContain(TOO_DEEP);
    const writer = protobuf.Writer.create();
    // 300 nested AnyValue.arrayValue levels, written by hand (protobufjs itself refuses to encode them).
    let inner: Uint8Array = protoBytes(types.traceRequest, {}).subarray(0, 0);
    for (let i = 0; i < 300; i++) {
      const arr = writer.reset().uint32((1 << 3) | 2).bytes(inner).finish();
      inner = protobuf.Writer.create().uint32((5 << 3) | 2).bytes(arr).finish();
    }
    const kv = protobuf.Writer.create().uint32((1 << 3) | 2).string('k').uint32((2 << 3) | 2).bytes(inner).finish();
    const span = protobuf.Writer.create().uint32((1 << 3) | 2).bytes(Buffer.from(hexId(16), 'hex')).uint32((9 << 3) | 2).bytes(kv).finish();
    const scopeSpans = protobuf.Writer.create().uint32((2 << 3) | 2).bytes(span).finish();
    const resourceSpans = protobuf.Writer.create().uint32((2 << 3) | 2).bytes(scopeSpans).finish();
    const request = protobuf.Writer.create().uint32((1 << 3) | 2).bytes(resourceSpans).finish();
    const b = await post('traces', request, { 'content-type': PROTO });
    expect(b.status).toBe(400);
    expect(protoStatus(b).message).toMatch(/recursion|depth|max/i);
  });
});
