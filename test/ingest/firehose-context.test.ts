// POST /api/v1/ingest/firehose, both backends: several payloads per record, request time and source ARN, record bounds, credential messages.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';
import { expectStreamedExactly, fixture, ingestedEvents, post, postJson, storedEvents } from './ingest-kit.js';

const b64 = (data: string | Buffer) => Buffer.from(data).toString('base64');
const SOURCE_ARN = 'arn:aws:firehose:us-east-1:123456789012:deliverystream/audit-stream';
const MAX_RECORDS = 10_000;

/** The payload lines of the multi-payload fixture (OpenTelemetry collector testdata shape, see its README). */
function payloadLines(): string[] {
  return fixture('firehose/cwlogs-multiple-payloads.jsonl').toString('utf8').trim().split('\n');
}

/** A payload line with its CloudWatch event ids moved by `shift`, so it is a different event. */
function shifted(line: string, shift: number): string {
  return line.replace(/"id":"(\d+)"/g, (_m, id: string) => `"id":"${BigInt(id) + BigInt(shift)}"`);
}

describe.each(backendNames)('Firehose records and request context (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { FIREHOSE_MAX_RECORDS: String(MAX_RECORDS) });

  it('splits a record holding several subscription payloads (newline-separated, or gzip members): every log event its own row; a bad payload loses nothing else', async () => {
    const org = await createOrg(app.url);
    const sse = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const [p1, p2, ticker, p4] = payloadLines();
    const goodMember = gzipSync(shifted(p4, 100));
    const corrupt = Buffer.from(gzipSync(shifted(p4, 200)));
    corrupt[corrupt.length - 12] ^= 0xff;
    const records = [
      // Newline-separated payloads in one gzip member, one of them not a subscription payload at all.
      { data: b64(gzipSync([p1, p2, ticker, p4].join('\n'))) },
      // Gzip members: concatenated, then one that is corrupt, then one after a newline.
      { data: b64(Buffer.concat([goodMember, corrupt, Buffer.from('\n'), gzipSync(shifted(p1, 300))])) },
    ];
    const body = { requestId: 'multi-req', timestamp: 1725570000000, records };
    const r = await postJson(app.url, 'firehose', org.key, body, { 'x-amz-firehose-source-arn': SOURCE_ARN });
    expect(r.status).toBe(200);

    const items = await ingestedEvents(app.url, org.key);
    const id = (shift: number) => String(38480917865042697267627490045603633139480491071049695232n + BigInt(shift));
    expect(
      items.map((e) => ({
        type: e.type,
        toolName: e.toolName,
        action: e.action,
        serverId: e.serverId,
        sessionId: e.sessionId,
        latencyMs: e.latencyMs,
        occurredAt: e.occurredAt,
        group: e.metadata.source_detail,
        eventId: e.metadata.cloudwatch?.eventId ?? null,
        record: e.metadata.firehose.recordIndex,
        part: e.metadata.firehose.part ?? null,
        format: e.metadata.payloadFormat,
      })),
    ).toEqual([
      { type: 'log', toolName: null, action: null, serverId: null, sessionId: null, latencyMs: null, occurredAt: '2024-09-05T13:47:15.523Z', group: 'test', eventId: id(0), record: 0, part: 0, format: 'firehose-subscription' },
      { type: 'log', toolName: null, action: null, serverId: null, sessionId: null, latencyMs: null, occurredAt: '2024-09-05T16:33:55.523Z', group: 'test', eventId: id(1), record: 0, part: 1, format: 'firehose-subscription' },
      // Not a subscription payload: kept as a text entry of its own; with no log group, the stream ARN is its source.
      { type: 'log', toolName: null, action: null, serverId: null, sessionId: null, latencyMs: null, occurredAt: '2024-09-05T21:00:00.000Z', group: SOURCE_ARN, eventId: null, record: 0, part: 2, format: 'firehose-text' },
      { type: 'tool_call', toolName: 'search_docs', action: 'allow', serverId: 'mcp-docs', sessionId: 'sess-mp-1', latencyMs: 41, occurredAt: '2024-09-05T19:20:35.523Z', group: '/aws/lambda/mcp-gateway', eventId: id(8), record: 0, part: 3, format: 'firehose-subscription' },
      { type: 'tool_call', toolName: 'drop_table', action: 'deny', serverId: 'mcp-db', sessionId: 'sess-mp-1', latencyMs: null, occurredAt: '2024-09-05T19:20:35.600Z', group: '/aws/lambda/mcp-gateway', eventId: null, record: 0, part: 3, format: 'firehose-subscription' },
      { type: 'tool_call', toolName: 'search_docs', action: 'allow', serverId: 'mcp-docs', sessionId: 'sess-mp-1', latencyMs: 41, occurredAt: '2024-09-05T19:20:35.523Z', group: '/aws/lambda/mcp-gateway', eventId: id(108), record: 1, part: 0, format: 'firehose-subscription' },
      { type: 'tool_call', toolName: 'drop_table', action: 'deny', serverId: 'mcp-db', sessionId: 'sess-mp-1', latencyMs: null, occurredAt: '2024-09-05T19:20:35.600Z', group: '/aws/lambda/mcp-gateway', eventId: null, record: 1, part: 0, format: 'firehose-subscription' },
      { type: 'log', toolName: null, action: null, serverId: null, sessionId: null, latencyMs: null, occurredAt: '2024-09-05T21:00:00.000Z', group: SOURCE_ARN, eventId: null, record: 1, part: 1, format: 'firehose-raw' },
      { type: 'log', toolName: null, action: null, serverId: null, sessionId: null, latencyMs: null, occurredAt: '2024-09-05T13:47:15.523Z', group: 'test', eventId: id(300), record: 1, part: 2, format: 'firehose-subscription' },
    ]);
    expect(items[2].metadata.message).toBe(ticker);
    expect(items[7].metadata.decodeError).toMatch(/^invalid gzip data/);
    expect(items[7].metadata.data).toBe(records[1].data);
    expect(items.filter((e) => e.metadata.data !== undefined)).toHaveLength(1);
    for (const e of items) expect(e.metadata.firehose).toMatchObject({ requestId: 'multi-req', timestamp: 1725570000000, sourceArn: SOURCE_ARN });
    await expectStreamedExactly(sse, app.url, org.key, await storedEvents(app.url, org.key));

    // Firehose retries with the same requestId: nothing new.
    const stored = await storedEvents(app.url, org.key);
    expect((await postJson(app.url, 'firehose', org.key, body, { 'x-amz-firehose-source-arn': SOURCE_ARN })).status).toBe(200);
    expect(await storedEvents(app.url, org.key)).toEqual(stored);
  });

  it("dates entries without a time of their own by the request's timestamp, not the receive time (message extraction on)", async () => {
    const org = await createOrg(app.url);
    const id = '8f5d3c2a-1b4e-4c6d-9a7b-2e3f4a5b6c7d';
    const lines = [
      `START RequestId: ${id} Version: $LATEST`,
      `2023-03-14T09:26:53.589Z\t${id}\tINFO\ttool=lookup action=allow server=mcp-kb`,
      `END RequestId: ${id}`,
      `REPORT RequestId: ${id}\tDuration: 12.34 ms\tBilled Duration: 13 ms\tMemory Size: 128 MB\tMax Memory Used: 70 MB`,
    ];
    const sentAt = Date.parse('2023-03-14T09:26:54.000Z');
    const r = await postJson(app.url, 'firehose', org.key, { requestId: 'ts-req', timestamp: sentAt, records: lines.map((l) => ({ data: b64(l) })) }, { 'x-amz-firehose-source-arn': SOURCE_ARN });
    expect(r.status).toBe(200);
    const items = await ingestedEvents(app.url, org.key);
    expect(items.map((e) => [e.metadata.format, e.occurredAt, e.metadata.source_detail, e.metadata.traceId])).toEqual([
      ['lambda-platform', '2023-03-14T09:26:54.000Z', SOURCE_ARN, id],
      ['logfmt', '2023-03-14T09:26:53.589Z', SOURCE_ARN, id],
      ['lambda-platform', '2023-03-14T09:26:54.000Z', SOURCE_ARN, id],
      ['lambda-platform', '2023-03-14T09:26:54.000Z', SOURCE_ARN, id],
    ]);
    expect(items[3].latencyMs).toBe(12);
    // A request timestamp that is no time falls back to the receive time; an ARN of the wrong shape is not kept.
    const other = await createOrg(app.url);
    const before = Date.now();
    await postJson(app.url, 'firehose', other.key, { requestId: 'ts-bad', timestamp: 'soon', records: [{ data: b64(lines[0]) }] }, { 'x-amz-firehose-source-arn': 'not an arn' });
    const [e] = await ingestedEvents(app.url, other.key);
    expect(Date.parse(e.occurredAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(e.metadata.source_detail).toBeNull();
    expect(e.metadata.firehose.sourceArn).toBeUndefined();
  });

  it('stores no row for an empty record and counts it; more records than FIREHOSE_MAX_RECORDS is a 413 in Firehose shape storing nothing', async () => {
    const org = await createOrg(app.url);
    const empties = { requestId: 'empty-req', timestamp: Date.now(), records: [...Array.from({ length: 5_000 }, () => ({ data: '' })), { data: b64('   \n') }, { data: b64('tool=kept action=allow') }] };
    const ok = await postJson(app.url, 'firehose', org.key, empties);
    expect(ok.status).toBe(200);
    expect((await ingestedEvents(app.url, org.key)).map((e) => e.toolName)).toEqual(['kept']);
    expect(app.logs.some((l) => l.includes('"requestId":"empty-req"') && l.includes('"emptyRecords":5001'))).toBe(true);
    const metrics = await http(`${app.url}/metrics`);
    expect(metrics.body).toMatch(/audit_stream_ingest_events_total\{source="firehose",outcome="empty"\} 5001/);

    // 100,000 empty records: gzip of gzip (the JSON body parser inflates a gzip body too) is a few hundred bytes.
    const json = JSON.stringify({ requestId: 'flood-req', timestamp: Date.now(), records: Array.from({ length: 100_000 }, () => ({ data: '' })) });
    const flood = gzipSync(gzipSync(json, { level: 9 }), { level: 9 });
    expect(flood.length).toBeLessThan(500);
    const tooMany = await post(app.url, 'firehose', org.key, flood, { 'content-encoding': 'gzip' });
    expect(tooMany.status).toBe(413);
    expect(Object.keys(tooMany.body).sort()).toEqual(['errorMessage', 'requestId', 'timestamp']);
    expect(tooMany.body.requestId).toBe('flood-req');
    expect(tooMany.body.errorMessage).toContain('FIREHOSE_MAX_RECORDS');
    expect(await ingestedEvents(app.url, org.key)).toHaveLength(1);
  });

  it('names X-Amz-Firehose-Access-Key when a request sends Authorization: Bearer, and echoes the body requestId on refusals without the request-id header', async () => {
    const org = await createOrg(app.url);
    const body = JSON.stringify({ requestId: 'body-req-9', timestamp: Date.now(), records: [{ data: b64('tool=x') }] });
    const viaBearer = await http(`${app.url}/api/v1/ingest/firehose`, { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'application/json' }, body });
    expect(viaBearer.status).toBe(401);
    expect(viaBearer.body.errorMessage).toContain('X-Amz-Firehose-Access-Key');
    expect(viaBearer.body.errorMessage).toContain('Authorization');
    expect(viaBearer.body.requestId).toBe('body-req-9');
    const badKey = await post(app.url, 'firehose', 'ask_not-a-real-key', body);
    expect(badKey.status).toBe(401);
    expect(badKey.body.requestId).toBe('body-req-9');
    const gzipped = await post(app.url, 'firehose', 'ask_not-a-real-key', gzipSync(body), { 'content-encoding': 'gzip' });
    expect(gzipped.body.requestId).toBe('body-req-9');
    const wrongType = await post(app.url, 'firehose', org.key, body, { 'content-type': 'text/plain' });
    expect(wrongType.status).toBe(415);
    expect(wrongType.body.requestId).toBe('body-req-9');
    // The header still wins when present.
    const withHeader = await post(app.url, 'firehose', 'ask_not-a-real-key', body, { 'x-amz-firehose-request-id': 'hdr-1' });
    expect(withHeader.body.requestId).toBe('hdr-1');
    expect(await storedEvents(app.url, org.key)).toEqual([]);
  });

  it('keeps at most 1 KiB of common attributes on each event and counts the rest', async () => {
    const org = await createOrg(app.url);
    const attributes = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`attr${String(i).padStart(2, '0')}`, 'v'.repeat(100)]));
    const r = await postJson(app.url, 'firehose', org.key, { requestId: 'attr-req', timestamp: Date.now(), records: [{ data: b64('tool=a') }, { data: b64('tool=b') }] }, {
      'x-amz-firehose-common-attributes': JSON.stringify({ commonAttributes: attributes }),
    });
    expect(r.status).toBe(200);
    for (const e of await ingestedEvents(app.url, org.key)) {
      const kept = e.metadata.firehose.commonAttributes as Record<string, string>;
      expect(Object.keys(kept)).toEqual(Object.keys(attributes).slice(0, 9));
      expect(e.metadata.firehose.commonAttributesOmitted).toBe(31);
    }
  });
});
