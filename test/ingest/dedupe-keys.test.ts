// The dedupe keys each source makes are pinned: stored data and retries depend on them staying byte-identical.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import type { EventsContext } from '../../src/ingest/ingest-source.js';
import { loadOtlpTypes } from '../../src/ingest/otlp/proto-types.js';
import { ingestSources } from '../../src/ingest/sources.js';

const sources = Object.fromEntries(ingestSources({ firehoseMaxRecords: 500, otlp: { types: loadOtlpTypes(), maxSpans: 100, maxLogRecords: 100, maxMessages: 10_000 } }).map((s) => [s.name, s]));
const ONCE = (prefix: string) => new RegExp(`^once:${prefix}:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`);

function ctx(over: Partial<EventsContext> = {}): EventsContext {
  return { idempotencyKey: null, receivedAt: new Date('2024-05-01T10:00:00Z'), contentType: 'application/json', path: '/', headers: {}, limits: { bodyBytes: 1 << 20, maxEntries: 100 }, ...over };
}

async function keys(source: string, body: unknown, over: Partial<EventsContext> = {}): Promise<string[]> {
  const out = await sources[source].toEvents(body, ctx(over));
  return out.events.map((e) => e.dedupeKey);
}

const CW_ID = '31953106606966983378809025079804211143289615424298221568';
const base64Gzip = (v: unknown) => gzipSync(Buffer.from(JSON.stringify(v))).toString('base64');

describe('dedupe keys per source', () => {
  it('raw: its id, else Idempotency-Key + position, else a key used once', async () => {
    const body = [{ id: 'evt-1', serverId: 's', toolName: 't' }, { id: 42, serverId: 's', toolName: 't' }, { serverId: 's', toolName: 't' }];
    const [a, b, c] = await keys('raw', body);
    expect([a, b]).toEqual(['raw:id:evt-1', 'raw:id:42']);
    expect(c).toMatch(ONCE('raw'));
    expect(await keys('raw', body, { idempotencyKey: 'req-7' })).toEqual(['raw:id:evt-1', 'raw:id:42', 'idem:req-7:2']);
    expect(await keys('raw', '{"serverId":"s","toolName":"t"}\n{"serverId":"s","toolName":"u"}\n', { contentType: 'application/x-ndjson', idempotencyKey: 'nd' })).toEqual(['idem:nd:0', 'idem:nd:1']);
  });

  it('cloudwatch: the CloudWatch event id, else Idempotency-Key + position, else a key used once', async () => {
    const body = { messageType: 'DATA_MESSAGE', logGroup: 'g', logStream: 's', logEvents: [{ id: CW_ID, timestamp: 1714557600000, message: 'tool=a' }, { timestamp: 1714557600000, message: 'tool=b' }] };
    const [a, b] = await keys('cloudwatch', body);
    expect(a).toBe(`cw:${CW_ID}`);
    expect(b).toMatch(ONCE('cw'));
    expect(await keys('cloudwatch', body, { idempotencyKey: 'k' })).toEqual([`cw:${CW_ID}`, 'idem:k:1']);
    expect(await keys('cloudwatch', { awslogs: { data: base64Gzip(body) } }, { idempotencyKey: 'k' })).toEqual([`cw:${CW_ID}`, 'idem:k:1']);
  });

  it('datadog: its id, else Idempotency-Key (position 0), else a key used once', async () => {
    expect(await keys('datadog', { id: '1234567890123456789012', title: 'x' })).toEqual(['dd:1234567890123456789012']);
    expect(await keys('datadog', { id: 77, title: 'x' })).toEqual(['dd:77']);
    expect(await keys('datadog', { title: 'x' }, { idempotencyKey: 'dk' })).toEqual(['idem:dk:0']);
    expect((await keys('datadog', { title: 'x' }))[0]).toMatch(ONCE('dd'));
  });

  it('firehose: request id + record index (+ payload part, + running event index), or the CloudWatch event id', async () => {
    const sub = (events: { id?: string; message: string }[]) => ({ messageType: 'DATA_MESSAGE', logGroup: 'g', logStream: 's', logEvents: events.map((e) => ({ timestamp: 1714557600000, ...e })) });
    const twoMembers = Buffer.concat([gzipSync(JSON.stringify(sub([{ message: 'tool=a' }]))), gzipSync(JSON.stringify(sub([{ message: 'tool=b' }, { id: CW_ID, message: 'tool=c' }])))]).toString('base64');
    const body = {
      requestId: 'req-1',
      timestamp: 1714557600000,
      records: [{ data: Buffer.from('tool=plain').toString('base64') }, { data: base64Gzip(sub([{ message: 'tool=x' }, { message: 'tool=y' }])) }, { data: twoMembers }, { data: '***' }],
    };
    expect(await keys('firehose', body)).toEqual(['fh:req-1:0', 'fh:req-1:1:0', 'fh:req-1:1:1', 'fh:req-1:2:0', 'fh:req-1:2:1', `cw:${CW_ID}`, 'fh:req-1:3']);
    expect(await keys('firehose', { records: [{ data: Buffer.from('x').toString('base64') }, { data: Buffer.from('{"a":1}\n').toString('base64') }] }, { headers: { 'x-amz-firehose-request-id': 'hdr-9' } })).toEqual(['fh:hdr-9:0', 'fh:hdr-9:1']);
  });
  it('otlp: a span is trace id + span id; a log record with ids is those + times + position; one without ids a key used once', async () => {
    const attributes = [{ key: 'mcp.method.name', value: { stringValue: 'tools/call' } }];
    const traces = { resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', name: 'tools/call t', attributes }] }] }] };
    expect(await keys('otlp', Buffer.from(JSON.stringify(traces)), { path: '/v1/traces' })).toEqual(['otlp:span:5b8efff798038103d269b633813fc60c:eee19b7ec3c1b174']);
    const records = [
      { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', timeUnixNano: '1714557600000000001', body: { stringValue: 'a' } },
      { body: { stringValue: 'b' } },
    ];
    const [a, b] = await keys('otlp', Buffer.from(JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: records }] }] })), { path: '/v1/logs', idempotencyKey: 'ignored' });
    expect(a).toBe('otlp:log:5b8efff798038103d269b633813fc60c:eee19b7ec3c1b174:1714557600000000001:0:0');
    expect(b).toMatch(ONCE('otlp'));
  });
});
