// INGEST_MAX_EVENT_BYTES over HTTP, on every source and both backends: 1 MiB values sent (a few KB of gzip) are stored
// cut with the marker, each event within the bound, its small fields whole.
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadOtlpTypes } from '../../src/ingest/otlp/proto-types.js';
import { TRUNCATED } from '../../src/shared/event-cost.js';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { ingestedEvents, type StoredEvent } from './ingest-kit.js';

const MAX_EVENT_BYTES = 16_384;
/** What the listing adds to an event besides its stored fields: seq, receivedAt and the field names it spells out. */
const LISTING_OVERHEAD = 200;
const MIB = 1024 * 1024;
const types = loadOtlpTypes();

describe.each(backendNames)('what one ingested event may cost (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { INGEST_MAX_EVENT_BYTES: String(MAX_EVENT_BYTES) });
  let org: TestOrg;

  const send = (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    return fetch(`${app.url}/api/v1/ingest${path}`, {
      method: 'POST',
      headers: { ...bearer(org.key), 'content-type': 'application/json', 'content-encoding': 'gzip', ...headers },
      body: new Uint8Array(gzipSync(bytes)),
    });
  };

  /** The events stored since `before`, each within the bound and carrying the marker. */
  async function newEvents(before: number): Promise<StoredEvent[]> {
    const events = (await ingestedEvents(app.url, org.key)).slice(before);
    for (const e of events) {
      expect(Buffer.byteLength(JSON.stringify(e))).toBeLessThanOrEqual(MAX_EVENT_BYTES + LISTING_OVERHEAD);
      expect(JSON.stringify(e)).toContain(TRUNCATED);
    }
    return events;
  }

  it('raw: 1 MiB of metadata (strings, and 100,000 keys) is cut; the event and its other fields are kept', async () => {
    org = await createOrg(app.url);
    const many = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    const r = await send('/events', [
      { serverId: 'srv', toolName: 'big', metadata: { blob: 'x'.repeat(MIB), note: 'kept' } },
      { serverId: 'srv', toolName: 'wide', metadata: { many } },
    ]);
    expect(await r.json()).toEqual({ accepted: 2, duplicates: 0 });
    const [big, wide] = await newEvents(0);
    expect(big).toMatchObject({ serverId: 'srv', toolName: 'big', metadata: { note: 'kept' } });
    expect(big.metadata.blob.endsWith(TRUNCATED)).toBe(true);
    expect(big.metadata.blob.length).toBeGreaterThan(MAX_EVENT_BYTES / 2);
    expect(wide.metadata.many.k0).toBe(0);
    expect(wide.metadata.many[TRUNCATED]).toBeGreaterThan(90_000);
  });

  it('cloudwatch: a 900 KiB JSON line (message and its parsed fields) is cut; the log group, tool and action are kept', async () => {
    const before = (await ingestedEvents(app.url, org.key)).length;
    const line = JSON.stringify({ tool: 'search', action: 'allow', payload: 'p'.repeat(900 * 1024) });
    const r = await send('/cloudwatch', { logGroup: '/aws/lambda/big', logStream: 's', events: [{ timestamp: new Date().toISOString(), message: line }] });
    expect(await r.json()).toEqual({ accepted: 1, duplicates: 0 });
    const [e] = await newEvents(before);
    expect(e).toMatchObject({ toolName: 'search', action: 'allow', metadata: { source_detail: '/aws/lambda/big', format: 'json' } });
    expect(e.metadata.message.endsWith(TRUNCATED)).toBe(true);
  });

  it('datadog and firehose: a 1 MiB body or record is cut', async () => {
    const before = (await ingestedEvents(app.url, org.key)).length;
    const dd = await send('/datadog', { title: 'tool=search action=allow', body: 'b'.repeat(MIB), tags: 'service:big' });
    expect(dd.status).toBe(200);
    const data = Buffer.from(`tool=lookup action=deny ${'d'.repeat(MIB)}`).toString('base64');
    const fh = await send('/firehose', { requestId: 'cost-1', timestamp: Date.now(), records: [{ data }] }, { 'x-amz-firehose-access-key': org.key });
    expect(fh.status).toBe(200);
    const [datadog, firehose] = await newEvents(before);
    expect(datadog).toMatchObject({ source: 'datadog', metadata: { source_detail: 'big' } });
    expect(firehose).toMatchObject({ source: 'firehose', toolName: 'lookup', action: 'deny' });
  });

  it('otlp: a 1 MiB span attribute and a 1 MiB log body are cut; the tool call is kept', async () => {
    const before = (await ingestedEvents(app.url, org.key)).length;
    const span = {
      traceId: randomBytes(16),
      spanId: randomBytes(8),
      name: 'tools/call fetch',
      kind: 2,
      startTimeUnixNano: '1772359200000000000',
      endTimeUnixNano: '1772359200010000000',
      attributes: [
        { key: 'mcp.method.name', value: { stringValue: 'tools/call' } },
        { key: 'gen_ai.tool.call.result', value: { stringValue: 'r'.repeat(MIB) } },
      ],
    };
    const traces = Buffer.from(types.traceRequest.encode(types.traceRequest.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] })).finish());
    const t = await send('/otlp/v1/traces', traces, { 'content-type': 'application/x-protobuf' });
    expect(t.status).toBe(200);
    const logs = await send('/otlp/v1/logs', { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 'l'.repeat(MIB) } }] }] }] });
    expect(logs.status).toBe(200);
    const [call, log] = await newEvents(before);
    expect(call).toMatchObject({ toolName: 'fetch', action: 'allow', metadata: { mcpMethod: 'tools/call', attributes: { 'mcp.method.name': 'tools/call' } } });
    expect(call.metadata.attributes['gen_ai.tool.call.result'].endsWith(TRUNCATED)).toBe(true);
    expect(log.metadata.message.endsWith(TRUNCATED)).toBe(true);
  });
});
