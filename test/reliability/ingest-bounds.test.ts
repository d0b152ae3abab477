// What one hostile ingest request costs a server process: the event-loop block (/healthz during the request), the peak
// RSS, and the bytes stored per byte sent, for OTLP's shared resource and scope, empty records and message floods, and
// one oversized value on every source. The bounds are asserted; the figures are printed for docs/ingestion.md.
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOtlpTypes } from '../../src/ingest/otlp/proto-types.js';
import { createOrg, http, type Json, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { LogAudit } from './log-audit.js';
import { memoryOf, pollHealth, resetPeak, storedBytes } from './process-cost.js';
import { reap, redisPrefix, spawnServer, type ServerProcess } from './processes.js';

const types = loadOtlpTypes();
const PROTO = 'application/x-protobuf';
/** INGEST_MAX_EVENT_BYTES given to the server (its default). */
const MAX_EVENT_BYTES = 65_536;
/** OTLP_MAX_MESSAGES_PER_EXPORT given to the server (its default). */
const MAX_MESSAGES = 500_000;
/** What a stored row's text holds besides the event the bound counts: org id, seq, receive time, column names. */
const ROW_OVERHEAD = 512;

let spanCounter = 0;
/** A tool-call span with fresh ids (protobufjs object form). */
function toolSpan(tool = 'bounded') {
  spanCounter++;
  return {
    traceId: randomBytes(16),
    spanId: randomBytes(8),
    name: `tools/call ${tool}`,
    kind: 2,
    startTimeUnixNano: String(1772359200000000000n + BigInt(spanCounter) * 1000n),
    endTimeUnixNano: String(1772359200010000000n + BigInt(spanCounter) * 1000n),
    attributes: [{ key: 'mcp.method.name', value: { stringValue: 'tools/call' } }],
  };
}

function encode(type: typeof types.traceRequest, value: Record<string, unknown>): Buffer {
  return Buffer.from(type.encode(type.fromObject(value)).finish());
}

/** Finding 1: one resource of `attributes` attributes and `scopes` scopes of one tool-call span each. */
function wideResource(attributes: number, scopes: number): Buffer {
  const attrs = Array.from({ length: attributes }, (_, i) => ({ key: `a${i}`, value: { stringValue: 'v' } }));
  attrs.unshift({ key: 'service.name', value: { stringValue: 'wide' } });
  const scopeSpans = Array.from({ length: scopes }, (_, i) => ({ scope: { name: `scope-${i}` }, spans: [toolSpan('wide')] }));
  return encode(types.traceRequest, { resourceSpans: [{ resource: { attributes: attrs }, scopeSpans }] });
}

/** Finding 2: `spans` tool-call spans under one scope whose name (or the resource's service.name) is `bytes` random characters. */
function hugeContext(what: 'scope' | 'service', bytes: number, spans: number): Buffer {
  const big = randomBytes(bytes).toString('base64').slice(0, bytes);
  const resource = { attributes: [{ key: 'service.name', value: { stringValue: what === 'service' ? big : 'svc' } }] };
  const scope = { name: what === 'scope' ? big : 'scope', version: '1.0' };
  return encode(types.traceRequest, { resourceSpans: [{ resource, scopeSpans: [{ scope, spans: Array.from({ length: spans }, () => toolSpan('ctx')) }] }] });
}

/** Finding 3: `n` empty log records. */
function emptyLogRecords(n: number): Buffer {
  return encode(types.logsRequest, { resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: n }, () => ({})) }] }] });
}

/** Finding 4: `n` empty resourceSpans, written by hand (field 1, length 0). */
function emptyResourceSpans(n: number): Buffer {
  return Buffer.alloc(2 * n, Buffer.from([0x0a, 0x00]));
}

describe.runIf(realBackendAvailable)('ingest bounds of one request, on a server process', () => {
  const audit = new LogAudit('ingest-bounds');
  let db: { url: string; drop(): Promise<void> };
  let server: ServerProcess;
  let org: TestOrg;
  let sql: pg.Client;
  const figures: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    server = await spawnServer({
      name: 'ingest-bounds',
      env: {
        DATABASE_URL: db.url,
        REDIS_URL: process.env.TEST_REDIS_URL!,
        REDIS_PREFIX: redisPrefix('bounds'),
        ANOMALY_MIN_RATE: '1000000000',
        INGEST_MAX_EVENT_BYTES: String(MAX_EVENT_BYTES),
        OTLP_MAX_MESSAGES_PER_EXPORT: String(MAX_MESSAGES),
      },
    });
    audit.output('server', server.output);
    org = await createOrg(server.url);
    audit.org(org);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });
  afterAll(async () => {
    console.log(figures.join('\n'));
    await sql?.end();
    await reap(server);
    await db?.drop();
    audit.assertClean();
  });

  interface Measured {
    r: Json;
    /** Longest /healthz answer while the request ran, ms. */
    blockedMs: number;
    /** Peak RSS above the level before the request, MiB. */
    growth: number;
    /** Rows and JSON text bytes the request added. */
    rows: number;
    storedBytes: number;
    largestRow: number;
    sent: number;
  }

  /** Posts and measures the request's cost; prints one line of figures. */
  async function measured(what: string, path: string, body: Uint8Array, headers: Record<string, string>): Promise<Measured> {
    const before = await storedBytes(sql, org.id);
    resetPeak(server.proc.pid!);
    const rss = memoryOf(server.proc.pid!).rss;
    const health = pollHealth(server.url);
    const r = await http(`${server.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${org.key}`, ...headers }, body: new Uint8Array(body) });
    const blockedMs = await health.stop();
    const growth = Math.max(0, memoryOf(server.proc.pid!).peak - rss);
    const after = await storedBytes(sql, org.id);
    const m = { r, blockedMs, growth, rows: after.rows - before.rows, storedBytes: after.textBytes - before.textBytes, largestRow: after.largestRow, sent: body.length };
    figures.push(
      `${what}: ${m.sent} bytes sent -> ${r.status}; /healthz worst ${blockedMs.toFixed(0)} ms; RSS ${rss.toFixed(0)} MiB +${growth.toFixed(1)} at peak; ` +
        `${m.rows} rows, ${m.storedBytes} bytes stored (${(m.storedBytes / m.sent).toFixed(1)} per byte sent), largest row ${m.largestRow}`,
    );
    return m;
  }

  const otlp = (signal: 'traces' | 'logs', what: string, bytes: Buffer) =>
    measured(what, `/api/v1/ingest/otlp/v1/${signal}`, gzipSync(bytes), { 'content-type': PROTO, 'content-encoding': 'gzip' });

  it('finding 1: a resource of 100,000 attributes shared by 50 scopes is bounded once, not once per scope', async () => {
    const m = await otlp('traces', 'OTLP 100,000 resource attributes x 50 scopes', wideResource(100_000, 50));
    expect(m.r.status).toBe(200);
    expect(m.rows).toBe(50);
    expect(m.largestRow).toBeLessThanOrEqual(MAX_EVENT_BYTES + ROW_OVERHEAD);
    // The resource's 4 KiB kept on its events is stored once (a shared context), not in each of the 50 rows.
    expect(m.storedBytes / m.rows).toBeLessThan(2_048);
    expect(m.growth).toBeLessThan(400);
  });

  it('finding 2: a 256 KiB scope name on 40 spans and a 256 KiB service.name on 20 are cut, never copied whole', async () => {
    const scope = await otlp('traces', 'OTLP 256 KiB scope name x 40 spans', hugeContext('scope', 256 * 1024, 40));
    const service = await otlp('traces', 'OTLP 256 KiB service.name x 20 spans', hugeContext('service', 256 * 1024, 20));
    for (const m of [scope, service]) {
      expect(m.r.status).toBe(200);
      expect(m.largestRow).toBeLessThanOrEqual(MAX_EVENT_BYTES + ROW_OVERHEAD);
      // Only the names' first 200 characters reach each event: a few KB per event, whatever the names' size.
      expect(m.storedBytes / m.rows).toBeLessThan(4096);
      expect(m.storedBytes).toBeLessThan(m.sent);
    }
    expect([scope.rows, service.rows]).toEqual([40, 20]);
  });

  it('finding 3: 10,000 empty log records store nothing (counted as empty)', async () => {
    const m = await otlp('logs', 'OTLP 10,000 empty log records', emptyLogRecords(10_000));
    expect(m.r.status).toBe(200);
    expect(m.rows).toBe(0);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/audit_stream_ingest_events_total\{source="otlp",outcome="empty"\} 10000/);
  });

  it('finding 4: a few KB of gzip holding 1,000,000 empty resourceSpans is refused before they are decoded (413)', async () => {
    const proto = await otlp('traces', 'OTLP 1,000,000 empty resourceSpans (protobuf)', emptyResourceSpans(1_000_000));
    expect(proto.sent).toBeLessThan(5_000);
    expect(proto.r.status).toBe(413);
    const json = await measured(
      'OTLP 1,000,000 empty resourceSpans (JSON)',
      '/api/v1/ingest/otlp/v1/traces',
      gzipSync(`{"resourceSpans":[${Array(1_000_000).fill('{}').join(',')}]}`),
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    );
    expect(json.r.status).toBe(413);
    expect(json.r.body).toMatchObject({ code: 3, message: expect.stringMatching(/OTLP_MAX_MESSAGES_PER_EXPORT/) });
    for (const m of [proto, json]) {
      expect(m.rows).toBe(0);
      // Decoding them took +570 MB at 2.57 M messages; the count is read without building them.
      expect(m.growth).toBeLessThan(100);
    }
  });

  it('finding 4: an export at OTLP_MAX_MESSAGES_PER_EXPORT is decoded; what that costs is the bound', async () => {
    const proto = await otlp('traces', `OTLP ${MAX_MESSAGES} empty resourceSpans (protobuf, at the limit)`, emptyResourceSpans(MAX_MESSAGES));
    const json = await measured(
      `OTLP ${MAX_MESSAGES - 2} empty resourceSpans (JSON, at the limit)`,
      '/api/v1/ingest/otlp/v1/traces',
      gzipSync(`{"resourceSpans":[${Array(MAX_MESSAGES - 2).fill('{}').join(',')}]}`),
      { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    );
    for (const m of [proto, json]) {
      expect(m.r.status).toBe(200);
      expect(m.rows).toBe(0);
      // 70-145 MiB measured on two shared cores; the bound is generous for a noisy machine.
      expect(m.growth).toBeLessThan(400);
    }
  });

  it('one 4 MiB value (4 KB of gzip) stores at most INGEST_MAX_EVENT_BYTES on every source', async () => {
    const big = 'x'.repeat(4 * 1024 * 1024);
    const gz = (value: unknown) => gzipSync(typeof value === 'string' || Buffer.isBuffer(value) ? value : JSON.stringify(value));
    const zipped = { 'content-type': 'application/json', 'content-encoding': 'gzip' };
    const now = new Date().toISOString();
    const cases: [string, string, Buffer, Record<string, string>][] = [
      ['raw 4 MiB metadata', '/api/v1/ingest/events', gz({ serverId: 's', toolName: 't', metadata: { blob: big } }), zipped],
      ['cloudwatch 4 MiB message', '/api/v1/ingest/cloudwatch', gz({ logGroup: 'g', logStream: 's', events: [{ timestamp: now, message: `tool=big ${big}` }] }), zipped],
      ['datadog 4 MiB body', '/api/v1/ingest/datadog', gz({ title: 'big', body: big }), zipped],
      [
        'firehose 4 MiB record',
        '/api/v1/ingest/firehose',
        gz({ requestId: 'big-1', timestamp: Date.now(), records: [{ data: Buffer.from(`tool=big ${'y'.repeat(3 * 1024 * 1024)}`).toString('base64') }] }),
        { ...zipped, 'x-amz-firehose-access-key': org.key },
      ],
      [
        'otlp 4 MiB log body',
        '/api/v1/ingest/otlp/v1/logs',
        gz(encode(types.logsRequest, { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: big } }] }] }] })),
        { 'content-type': PROTO, 'content-encoding': 'gzip' },
      ],
    ];
    for (const [what, path, body, headers] of cases) {
      const m = await measured(what, path, body, headers);
      expect(m.r.status, what).toBe(200);
      expect(m.rows, what).toBe(1);
      expect(m.storedBytes, what).toBeLessThanOrEqual(MAX_EVENT_BYTES + ROW_OVERHEAD);
    }
  });

  it('CloudWatch and Firehose amplification: 6,000 events naming 100 x 1 KB subscription filters, bytes stored per byte sent', async () => {
    const payload = {
      messageType: 'DATA_MESSAGE',
      owner: '123456789012',
      logGroup: '/aws/lambda/amp',
      logStream: '2024/05/01/[$LATEST]amp',
      subscriptionFilters: Array.from({ length: 100 }, (_, i) => String(i).padEnd(1024, 'f')),
      logEvents: Array.from({ length: 6_000 }, () => ({ timestamp: 1714558800000, message: 'tool=search action=allow' })),
    };
    const data = gzipSync(JSON.stringify(payload)).toString('base64');
    const cw = await measured('cloudwatch awslogs 6,000 events x 100 KB of filters', '/api/v1/ingest/cloudwatch', Buffer.from(JSON.stringify({ awslogs: { data } })), { 'content-type': 'application/json' });
    const fh = await measured('firehose 6,000 events x 100 KB of filters', '/api/v1/ingest/firehose', Buffer.from(JSON.stringify({ requestId: 'amp-1', timestamp: Date.now(), records: [{ data }] })), {
      'content-type': 'application/json',
      'x-amz-firehose-access-key': org.key,
    });
    for (const m of [cw, fh]) {
      expect(m.r.status).toBe(200);
      expect(m.rows).toBe(6_000);
      // Each event keeps its own ~25-character line, the bounded shared context once per batch, and fixed columns.
      expect(m.storedBytes / m.rows).toBeLessThan(1_024);
    }
  });
});
