// What one OTLP export may cost: the resource and scope read once, names cut, messages counted before decoding, empty
// records not stored, deep values marked rather than refused. Pure checks, then each bound tried over HTTP on both backends.
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { TOO_DEEP } from '../../../src/ingest/otlp/attributes.js';
import { withMessageDepth } from '../../../src/ingest/otlp/decode.js';
import { exportEvents } from '../../../src/ingest/otlp/export-events.js';
import { countJsonContainers, countProtobufMessages } from '../../../src/ingest/otlp/message-budget.js';
import { loadOtlpTypes } from '../../../src/ingest/otlp/proto-types.js';
import { TRUNCATED } from '../../../src/shared/event-cost.js';
import { TooLarge } from '../../../src/shared/domain-errors.js';
import { backendNames } from '../../helpers/backends.js';
import { bearer, createOrg, type TestOrg } from '../../helpers/app.js';
import { suiteApp } from '../../helpers/suite-app.js';
import { storedEvents } from '../ingest-kit.js';
import { OTLP_BASE } from './otlp-kit.js';

const types = loadOtlpTypes();
const PROTO = 'application/x-protobuf';
const LIMITS = { maxSpans: 10_000, maxLogRecords: 10_000, maxMessages: 500_000 };

/** Protobuf bytes of an export; values nested deeper than protobufjs's default of 100 messages are encoded too. */
function encode(type: protobuf.Type, value: Record<string, unknown>): Buffer {
  return withMessageDepth(() => Buffer.from(type.encode(type.fromObject(value)).finish()));
}

function toolSpan(tool = 'bounded', attributes: unknown[] = []) {
  return {
    traceId: randomBytes(16),
    spanId: randomBytes(8),
    name: `tools/call ${tool}`,
    kind: 2,
    startTimeUnixNano: '1772359200000000000',
    endTimeUnixNano: '1772359200010000000',
    attributes: [{ key: 'mcp.method.name', value: { stringValue: 'tools/call' } }, ...attributes],
  };
}

/** An AnyValue of `depth` nested maps around a string. */
function nestedMaps(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { stringValue: 'leaf' };
  for (let i = 0; i < depth; i++) value = { kvlistValue: { values: [{ key: `k${i}`, value }] } };
  return value;
}

/** Every message object a decoded protobufjs tree holds below its root. */
function messagesIn(value: unknown): number {
  let n = 0;
  const visit = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(visit);
    if (!(v instanceof protobuf.Message)) return;
    n++;
    for (const child of Object.values(v)) visit(child);
  };
  for (const child of Object.values(value as object)) visit(child);
  return n;
}

describe('OTLP bounds of one export (pure)', () => {
  it('the resource is bounded once and shared: every event of every scope carries the very same copy, stored once', () => {
    const resource = { attributes: Array.from({ length: 2_000 }, (_, i) => ({ key: `attr.${i}`, value: { stringValue: 'v'.repeat(20) } })) };
    const scopeSpans = Array.from({ length: 20 }, (_, i) => ({ scope: { name: `scope-${i}` }, spans: [toolSpan(), toolSpan()] }));
    const out = exportEvents(types, LIMITS, 'traces', encode(types.traceRequest, { resourceSpans: [{ resource, scopeSpans }] }), 'protobuf', { receivedAt: new Date() });
    expect(out.events).toHaveLength(40);
    const copies = new Set(out.events.map((e) => e.metadata!.resource));
    expect(copies.size).toBe(1);
    // Stored once per organization (audit_contexts), not in each row: the events share one sharedMetadata holding it.
    expect(new Set(out.events.map((e) => e.sharedMetadata)).size).toBe(1);
    expect(out.events[0].sharedMetadata!.resource).toBe([...copies][0]);
    expect(Buffer.byteLength(JSON.stringify([...copies][0]))).toBeLessThanOrEqual(4096);
    expect(out.events[0].metadata!.resourceAttributesOmitted).toBeGreaterThan(1_800);
    // One scope object per scope, shared by its spans.
    expect(out.events[0].metadata!.scope).toBe(out.events[1].metadata!.scope);
    expect(new Set(out.events.map((e) => e.metadata!.scope)).size).toBe(20);
  });

  it('counts the messages protobufjs would build, on the bytes, without building them', () => {
    const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        fc.record({ stringValue: fc.string({ maxLength: 5 }) }),
        fc.record({ intValue: fc.integer().map(String) }),
        fc.record({ arrayValue: fc.record({ values: fc.array(tie('value'), { maxLength: 3 }) }) }),
        fc.record({ kvlistValue: fc.record({ values: fc.array(fc.record({ key: fc.string({ maxLength: 3 }), value: tie('value') }), { maxLength: 3 }) }) }),
      ),
    })).value;
    const attributes = fc.array(fc.record({ key: fc.string({ maxLength: 4 }), value: anyValue }), { maxLength: 4 });
    const span = fc.record({ name: fc.string({ maxLength: 5 }), attributes, events: fc.array(fc.record({ name: fc.string({ maxLength: 3 }), attributes }), { maxLength: 2 }), status: fc.constant({ code: 2 }) });
    const request = fc.record({
      resourceSpans: fc.array(fc.record({ resource: fc.record({ attributes }), scopeSpans: fc.array(fc.record({ scope: fc.record({ name: fc.string({ maxLength: 4 }) }), spans: fc.array(span, { maxLength: 3 }) }), { maxLength: 3 }) }), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(request, (value) => {
        const bytes = encode(types.traceRequest, value);
        expect(countProtobufMessages(types.traceRequest, bytes, 1e9)).toBe(messagesIn(types.traceRequest.decode(bytes)));
      }),
      { numRuns: 200 },
    );
  });

  it('refuses past the limit before decoding, and skips what the decoder skips (unknown fields, strings)', () => {
    const empties = Buffer.alloc(2 * 1_001, Buffer.from([0x0a, 0x00]));
    expect(() => countProtobufMessages(types.traceRequest, empties, 1_000)).toThrow(TooLarge);
    expect(() => exportEvents(types, { ...LIMITS, maxMessages: 1_000 }, 'traces', empties, 'protobuf', { receivedAt: new Date() })).toThrow(/OTLP_MAX_MESSAGES_PER_EXPORT/);
    expect(countProtobufMessages(types.traceRequest, empties.subarray(0, 2_000), 1_000)).toBe(1_000);
    // Field 2 of the request is unknown (the decoder drops it): a million of them build nothing.
    expect(countProtobufMessages(types.traceRequest, Buffer.alloc(2_000_000, Buffer.from([0x12, 0x00])), 10)).toBe(0);
    expect(countJsonContainers('{"a":"{{{{[[[[","b":[{}]}', 3)).toBe(3);
    expect(() => countJsonContainers(`{"resourceSpans":[${Array(1_000).fill('{}').join(',')}]}`, 1_000)).toThrow(TooLarge);
  });
});

describe.each(backendNames)('OTLP bounds over HTTP (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { OTLP_MAX_MESSAGES_PER_EXPORT: '2000', INGEST_MAX_EVENT_BYTES: '16384' });
  let org: TestOrg;

  const post = (signal: 'traces' | 'logs', body: Uint8Array | string, type = PROTO) =>
    fetch(`${app.url}${OTLP_BASE}/v1/${signal}`, { method: 'POST', headers: { ...bearer(org.key), 'content-type': type }, body: typeof body === 'string' ? body : new Uint8Array(body) });
  const status = async (res: Response) => (res.headers.get('content-type') === PROTO ? types.status.toObject(types.status.decode(Buffer.from(await res.arrayBuffer()))) : await res.json());
  const metric = async (outcome: string) => {
    const m = new RegExp(`audit_stream_ingest_events_total\\{source="otlp",outcome="${outcome}"\\} (\\d+)`).exec(await (await fetch(`${app.url}/metrics`)).text());
    return m ? Number(m[1]) : 0;
  };

  it('a huge scope name, scope version and service.name are cut to 200 characters with the marker', async () => {
    org = await createOrg(app.url);
    const big = 'n'.repeat(512 * 1024);
    const res = await post(
      'traces',
      encode(types.traceRequest, {
        resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: big } }] }, scopeSpans: [{ scope: { name: big, version: big }, spans: [toolSpan('named'), toolSpan('named')] }] }],
      }),
    );
    expect(res.status).toBe(200);
    const stored = await storedEvents(app.url, org.key, '&source=otlp');
    expect(stored).toHaveLength(2);
    for (const e of stored) {
      const cut = 'n'.repeat(200 - TRUNCATED.length) + TRUNCATED;
      expect(e.metadata.scope).toEqual({ name: cut, version: cut });
      expect(e.metadata.source_detail).toBe(cut);
      expect(e.serverId).toHaveLength(200);
      expect(Buffer.byteLength(JSON.stringify(e))).toBeLessThanOrEqual(16_384 + 200);
    }
  });

  it('log records with no body, attributes or event name and spans with no name or attributes store nothing; counted as empty', async () => {
    const before = await metric('empty');
    const logs = await post('logs', encode(types.logsRequest, { resourceLogs: [{ scopeLogs: [{ logRecords: [...Array.from({ length: 500 }, () => ({ severityText: 'INFO' })), { body: { stringValue: '   ' } }, { body: { stringValue: 'kept' } }] }] }] }));
    expect(logs.status).toBe(200);
    const spans = await post('traces', encode(types.traceRequest, { resourceSpans: [{ scopeSpans: [{ spans: [...Array.from({ length: 300 }, () => ({})), toolSpan('after_empty')] }] }] }));
    expect(spans.status).toBe(200);
    expect(await metric('empty')).toBe(before + 501 + 300);
    const stored = await storedEvents(app.url, org.key, '&source=otlp');
    expect(stored.filter((e) => e.metadata.message === 'kept')).toHaveLength(1);
    expect(stored.filter((e) => e.type === 'log' && e.metadata.message !== 'kept')).toHaveLength(0);
    expect(stored.some((e) => e.toolName === 'after_empty')).toBe(true);
  });

  it('more messages than OTLP_MAX_MESSAGES_PER_EXPORT is a 413 before decoding, protobuf and JSON; at the limit it is read', async () => {
    const count = (await storedEvents(app.url, org.key)).length;
    const over = await post('traces', Buffer.alloc(2 * 2_001, Buffer.from([0x0a, 0x00])));
    expect(over.status).toBe(413);
    expect(await status(over)).toMatchObject({ code: 3, message: expect.stringMatching(/OTLP_MAX_MESSAGES_PER_EXPORT/) });
    const json = await post('traces', `{"resourceSpans":[${Array(2_001).fill('{}').join(',')}]}`, 'application/json');
    expect(json.status).toBe(413);
    expect(await status(json)).toMatchObject({ code: 3, message: expect.stringMatching(/OTLP_MAX_MESSAGES_PER_EXPORT/) });
    // Attributes count too: 1,000 of them are 2,000 messages (key-value and value), with the resource over the limit.
    const attrs = Array.from({ length: 1_000 }, (_, i) => ({ key: `a${i}`, value: { stringValue: 'v' } }));
    const wide = await post('traces', encode(types.traceRequest, { resourceSpans: [{ resource: { attributes: attrs }, scopeSpans: [{ spans: [toolSpan('wide')] }] }] }));
    expect(wide.status).toBe(413);
    const within = await post('traces', Buffer.alloc(2 * 2_000, Buffer.from([0x0a, 0x00])));
    expect(within.status).toBe(200);
    expect(await storedEvents(app.url, org.key)).toHaveLength(count);
  });

  it('attribute values nested 40 levels in maps get the marker at 32, in OTLP/JSON and protobuf alike, not a 400', async () => {
    const span = toolSpan('deep', [{ key: 'nested', value: nestedMaps(40) }]);
    const proto = await post('traces', encode(types.traceRequest, { resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] }));
    expect(proto.status).toBe(200);
    const jsonSpan = { ...span, traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex'), name: 'tools/call deep_json' };
    const json = await post('traces', JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [jsonSpan] }] }] }), 'application/json');
    expect(json.status).toBe(200);
    const logs = await post('logs', JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: nestedMaps(200) }] }] }] }), 'application/json');
    expect(logs.status).toBe(200);
    const stored = await storedEvents(app.url, org.key, '&source=otlp');
    for (const tool of ['deep', 'deep_json']) {
      let value = stored.find((e) => e.toolName === tool)!.metadata.attributes.nested;
      for (let depth = 0; depth < 32; depth++) value = value[`k${39 - depth}`];
      expect(value).toBe(TOO_DEEP);
    }
    expect(stored.some((e) => typeof e.metadata.message === 'string' && e.metadata.message.includes(TOO_DEEP))).toBe(true);
  });
});
