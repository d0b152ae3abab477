// POST /api/v1/ingest/firehose against a real server, both backends: the Firehose protocol, bad records stored raw, retries, error shapes.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, startApp } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';
import { columns, fixture, fixtureJson, ingestedEvents, post, postJson, startCuttableProxy, storedEvents, streamPayloadOf, viaProxy } from './ingest-kit.js';

const BODY_LIMIT = 64 * 1024;
const MAX_ENTRIES = 50;
const BATCH = 'firehose/batch-with-bad-record.json';
const REQUEST_ID = 'ed4acda5-034f-9f42-bba1-f29aea6d7d8f';
const GROUP = '/aws/ecs/agent-runner';

const b64 = (data: string | Buffer) => Buffer.from(data).toString('base64');
const subscription = (events: { id?: string; timestamp: number; message: string }[]) => ({
  messageType: 'DATA_MESSAGE',
  owner: '123456789012',
  logGroup: GROUP,
  logStream: 'agent/runner/7c2d',
  subscriptionFilters: ['agent-to-firehose'],
  logEvents: events,
});

/** A Firehose success body is exactly {requestId, timestamp} with a current epoch-ms timestamp. */
function expectAck(body: unknown, requestId: string, before: number) {
  expect(Object.keys(body as object).sort()).toEqual(['requestId', 'timestamp']);
  const b = body as { requestId: string; timestamp: number };
  expect(b.requestId).toBe(requestId);
  expect(typeof b.timestamp).toBe('number');
  expect(b.timestamp).toBeGreaterThanOrEqual(before);
  expect(b.timestamp).toBeLessThanOrEqual(Date.now());
}

/** A Firehose failure body is exactly {requestId, timestamp, errorMessage}. */
function expectFailure(body: unknown, requestId: string) {
  expect(Object.keys(body as object).sort()).toEqual(['errorMessage', 'requestId', 'timestamp']);
  const b = body as { requestId: string; timestamp: number; errorMessage: string };
  expect(b.requestId).toBe(requestId);
  expect(typeof b.timestamp).toBe('number');
  expect(b.errorMessage.length).toBeGreaterThan(0);
  return b.errorMessage;
}

describe.each(backendNames)('Firehose ingest (%s)', (backendName) => {
  const { app, backend } = suiteApp(backendName, { BODY_LIMIT_BYTES: String(BODY_LIMIT), INGEST_MAX_ENTRIES: String(MAX_ENTRIES) });

  it('stores a batch with undecodable records: subscription records per log event, bad records raw, control records skipped; answers {requestId, timestamp}', async () => {
    const org = await createOrg(app.url);
    const sse = await openSse(`${app.url}/api/v1/events?types=tool_call`, bearer(org.key));
    const before = Date.now();
    const r = await post(app.url, 'firehose', org.key, fixture(BATCH), { 'x-amz-firehose-request-id': REQUEST_ID, 'x-amz-firehose-protocol-version': '1.0' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('application/json');
    expectAck(r.body, REQUEST_ID, before);

    const items = await ingestedEvents(app.url, org.key);
    const fh = (recordIndex: number) => ({ requestId: REQUEST_ID, timestamp: 1714558205123, recordIndex });
    // Records without a time of their own take the request's timestamp (1714558205123), not the receive time.
    expect(items.map(columns)).toEqual([
      { type: 'tool_call', source: 'firehose', occurredAt: '2024-05-01T10:10:00.000Z', serverId: 'mcp-web', sessionId: 'sess-fh-1', toolName: 'web_search', action: 'allow', latencyMs: 210 },
      { type: 'log', source: 'firehose', occurredAt: '2024-05-01T10:10:00.500Z', serverId: null, sessionId: null, toolName: null, action: null, latencyMs: null },
      { type: 'tool_call', source: 'firehose', occurredAt: '2024-05-01T10:10:01.000Z', serverId: 'mcp-git', sessionId: 'sess-fh-1', toolName: 'delete_repo', action: 'deny', latencyMs: 3 },
      { type: 'log', source: 'firehose', occurredAt: '2024-05-01T10:10:05.123Z', serverId: null, sessionId: null, toolName: null, action: null, latencyMs: null },
      { type: 'log', source: 'firehose', occurredAt: '2024-05-01T10:10:05.123Z', serverId: null, sessionId: null, toolName: null, action: null, latencyMs: null },
      { type: 'tool_call', source: 'firehose', occurredAt: '2024-05-01T10:10:06.000Z', serverId: 'mcp-llm', sessionId: null, toolName: 'summarize', action: 'allow', latencyMs: 77 },
    ]);
    const [web, heartbeat, git, notBase64, badGzip, text] = items;
    expect(web.metadata).toMatchObject({
      source_detail: GROUP,
      traceId: 'req-fh-1',
      requestId: 'req-fh-1',
      payloadFormat: 'firehose-subscription',
      format: 'json',
      firehose: fh(0),
      cloudwatch: { logGroup: GROUP, logStream: 'agent/runner/7c2d', owner: '123456789012', subscriptionFilters: ['agent-to-firehose'], messageType: 'DATA_MESSAGE', eventId: '38254831234567890123456789012345678901234567890123456001' },
    });
    expect(heartbeat.metadata).toMatchObject({ message: 'agent heartbeat ok', source_detail: GROUP, traceId: null, firehose: fh(0) });
    expect(heartbeat.metadata.cloudwatch.eventId).toBe('38254831234567890123456789012345678901234567890123456002');
    expect(git.metadata).toMatchObject({ firehose: fh(1), source_detail: GROUP, message: 'tool=delete_repo action=refused server=mcp-git session=sess-fh-1 latency_ms=3' });
    expect(notBase64.metadata).toMatchObject({ decodeError: 'data is not base64', data: 'this is not base64!', payloadFormat: 'firehose-raw', firehose: fh(2), source_detail: null, traceId: null });
    expect(badGzip.metadata.decodeError).toMatch(/^invalid gzip data/);
    expect(badGzip.metadata.data).toBe(fixtureJson(BATCH).records[3].data);
    expect(badGzip.metadata.firehose).toEqual(fh(3));
    expect(text.metadata).toMatchObject({
      payloadFormat: 'firehose-text',
      format: 'json',
      source_detail: null,
      traceId: '9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d',
      requestId: '9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d',
      level: 'INFO',
      firehose: fh(5),
    });
    expect(text.metadata.message).toBe(Buffer.from(fixtureJson(BATCH).records[5].data, 'base64').toString('utf8'));

    const calls = items.filter((e) => e.type === 'tool_call');
    await sse.waitForCount(calls.length);
    expect(sse.events.map((e) => Number(e.id))).toEqual(calls.map((e) => e.seq));
    expect(sse.events.map((e) => e.json)).toEqual(calls.map(streamPayloadOf));
    sse.close();
  });

  it('stores nothing new when Firehose retries the request (same requestId), also gzip-encoded', async () => {
    const org = await createOrg(app.url);
    const body = fixture(BATCH);
    expect((await post(app.url, 'firehose', org.key, body)).status).toBe(200);
    const first = await storedEvents(app.url, org.key);
    expect(first.filter((e) => e.source === 'firehose')).toHaveLength(6);
    const before = Date.now();
    const again = await post(app.url, 'firehose', org.key, body);
    expectAck(again.body, REQUEST_ID, before);
    const gz = await post(app.url, 'firehose', org.key, gzipSync(body), { 'content-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    expect(await storedEvents(app.url, org.key)).toEqual(first);
  });

  it('dedupes subscription log events by CloudWatch event id even under a new requestId; other records are keyed by requestId and index', async () => {
    const org = await createOrg(app.url);
    const payload = subscription([
      { id: '38254831234567890123456789012345678901234567890123459001', timestamp: 1714558300000, message: 'tool=a action=allow' },
      { timestamp: 1714558300001, message: 'tool=b action=allow' },
    ]);
    const request = (requestId: string) => ({ requestId, timestamp: Date.now(), records: [{ data: b64(gzipSync(JSON.stringify(payload))) }, { data: b64('tool=c action=deny') }] });
    expect((await postJson(app.url, 'firehose', org.key, request('req-1'))).status).toBe(200);
    expect((await postJson(app.url, 'firehose', org.key, request('req-1'))).status).toBe(200);
    expect((await ingestedEvents(app.url, org.key)).map((e) => e.toolName)).toEqual(['a', 'b', 'c']);
    expect((await postJson(app.url, 'firehose', org.key, request('req-2'))).status).toBe(200);
    // The event with a CloudWatch id is the same event; the others cannot be told apart from new ones.
    expect((await ingestedEvents(app.url, org.key)).map((e) => e.toolName)).toEqual(['a', 'b', 'c', 'b', 'c']);
  });

  it('takes the request id from X-Amz-Firehose-Request-Id when the body has none, and keeps common attributes in metadata', async () => {
    const org = await createOrg(app.url);
    const before = Date.now();
    const r = await postJson(app.url, 'firehose', org.key, { records: [{ data: b64('{"tool":"t1","action":"allow"}') }] }, {
      'x-amz-firehose-request-id': 'hdr-req-7',
      'x-amz-firehose-common-attributes': JSON.stringify({ commonAttributes: { env: 'prod', team: 'ai-platform' } }),
    });
    expect(r.status).toBe(200);
    expectAck(r.body, 'hdr-req-7', before);
    const [e] = await ingestedEvents(app.url, org.key);
    expect(e.toolName).toBe('t1');
    expect(e.metadata.firehose).toEqual({ requestId: 'hdr-req-7', recordIndex: 0, commonAttributes: { env: 'prod', team: 'ai-platform' } });
  });

  it('stores records it cannot use raw and still answers 200: no data, non-UTF-8 bytes, a gzip bomb, a broken subscription payload; an empty record stores nothing', async () => {
    const org = await createOrg(app.url);
    const bomb = gzipSync(Buffer.alloc(BODY_LIMIT * 4, 0x41));
    expect(bomb.length).toBeLessThan(BODY_LIMIT / 10);
    const jsonArray = JSON.stringify([null, 1]);
    const records = [
      { nodata: true },
      'just a string',
      { data: b64(Buffer.from([0xff, 0xfe, 0xfd, 0x00, 0xc3])) },
      { data: bomb.toString('base64') },
      { data: b64(gzipSync(JSON.stringify({ messageType: 'DATA_MESSAGE', logGroup: 'g', logStream: 's', logEvents: [{ id: '9', timestamp: 1 }] }))) },
      { data: b64(jsonArray) },
      { data: '' },
    ];
    const r = await postJson(app.url, 'firehose', org.key, { requestId: 'raw-req', timestamp: Date.now(), records });
    expect(r.status).toBe(200);
    const items = await ingestedEvents(app.url, org.key);
    expect(items.map((e) => e.metadata.firehose.recordIndex)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(items.slice(0, 5).every((e) => e.type === 'log' && e.metadata.payloadFormat === 'firehose-raw')).toBe(true);
    expect(items[0].metadata).toMatchObject({ decodeError: 'record has no "data" string', data: '{"nodata":true}' });
    expect(items[1].metadata).toMatchObject({ decodeError: 'record has no "data" string', data: 'just a string' });
    expect(items[2].metadata.decodeError).toBe('decoded data is neither gzip nor UTF-8 text');
    expect(items[3].metadata.decodeError).toBe(`decompressed record exceeds ${BODY_LIMIT} bytes`);
    expect(items[4].metadata.decodeError).toBe('not a valid subscription payload: logEvents.0.message Invalid input: expected string, received undefined');
    expect(items[4].metadata.message).toContain('"messageType":"DATA_MESSAGE"');
    // A JSON array record is a plain text entry; the empty record is counted in the delivery log line, not stored.
    expect(items[5].metadata).toMatchObject({ payloadFormat: 'firehose-text', message: jsonArray });
    expect(app.logs.some((l) => l.includes('"requestId":"raw-req"') && l.includes('"emptyRecords":1'))).toBe(true);
  });

  it('bounds what one request may decompress to (8 times the body limit): later records are stored raw, not rejected', async () => {
    const org = await createOrg(app.url);
    const big = 'a'.repeat(60_000);
    const records = Array.from({ length: 10 }, (_, i) => ({ data: b64(gzipSync(JSON.stringify(subscription([{ id: `77${i}`, timestamp: 1714558500000, message: big }])))) }));
    const r = await postJson(app.url, 'firehose', org.key, { requestId: 'budget-req', timestamp: Date.now(), records });
    expect(r.status).toBe(200);
    const items = await ingestedEvents(app.url, org.key);
    expect(items.map((e) => e.metadata.payloadFormat)).toEqual([...Array(8).fill('firehose-subscription'), 'firehose-raw', 'firehose-raw']);
    expect(items[8].metadata.decodeError).toMatch(/left for this request$/);
    expect(items[8].metadata.data).toBe(records[8].data);
  });

  it('stores a record holding more log events than INGEST_MAX_ENTRIES (in several transactions) and its retry stores nothing', async () => {
    const org = await createOrg(app.url);
    const n = MAX_ENTRIES * 2 + 7;
    const events = Array.from({ length: n }, (_, i) => ({ id: String(10n ** 40n + BigInt(i)), timestamp: 1714558400000 + i, message: `tool=bulk action=allow seq=${i}` }));
    const body = { requestId: 'bulk-req', timestamp: Date.now(), records: [{ data: b64(gzipSync(JSON.stringify(subscription(events)))) }] };
    expect((await postJson(app.url, 'firehose', org.key, body)).status).toBe(200);
    expect((await postJson(app.url, 'firehose', org.key, body)).status).toBe(200);
    const items = await ingestedEvents(app.url, org.key);
    expect(items).toHaveLength(n);
    expect(items.map((e) => e.metadata.cloudwatch.eventId)).toEqual(events.map((e) => e.id));
  });

  it('answers failures in Firehose shape: 401 bad or missing key, 403 scope, 400 not a Firehose body, 413 over the body limit, 415', async () => {
    const org = await createOrg(app.url);
    const body = fixture(BATCH);
    const hdr = { 'x-amz-firehose-request-id': REQUEST_ID };
    const bad = await post(app.url, 'firehose', 'ask_wrong', body, hdr);
    expect(bad.status).toBe(401);
    expectFailure(bad.body, REQUEST_ID);
    const bearerOnly = await http(`${app.url}/api/v1/ingest/firehose`, { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'application/json', ...hdr }, body: new Uint8Array(body) });
    expect(bearerOnly.status).toBe(401);
    expectFailure(bearerOnly.body, REQUEST_ID);
    const readOnly = await createOrg(app.url, { scopes: ['events:read'] });
    const denied = await post(app.url, 'firehose', readOnly.key, body, hdr);
    expect(denied.status).toBe(403);
    expectFailure(denied.body, REQUEST_ID);

    const notFirehose = await postJson(app.url, 'firehose', org.key, { requestId: 'shape-req', hello: 'world' });
    expect(notFirehose.status).toBe(400);
    expect(expectFailure(notFirehose.body, 'shape-req')).toContain('records');
    const notObject = await postJson(app.url, 'firehose', org.key, [1, 2], hdr);
    expect(notObject.status).toBe(400);
    expectFailure(notObject.body, REQUEST_ID);
    const noId = await postJson(app.url, 'firehose', org.key, { records: [] });
    expect(noId.status).toBe(400);
    expect(expectFailure(noId.body, '')).toContain('requestId');
    const invalidJson = await post(app.url, 'firehose', org.key, '{"requestId":', hdr);
    expect(invalidJson.status).toBe(400);
    expectFailure(invalidJson.body, REQUEST_ID);

    const huge = { requestId: 'huge-req', timestamp: Date.now(), records: [{ data: b64('x'.repeat(BODY_LIMIT)) }] };
    const tooBig = await postJson(app.url, 'firehose', org.key, huge, { 'x-amz-firehose-request-id': 'huge-req' });
    expect(tooBig.status).toBe(413);
    expectFailure(tooBig.body, 'huge-req');
    const bombBody = await post(app.url, 'firehose', org.key, gzipSync(JSON.stringify(huge)), { 'content-encoding': 'gzip', 'x-amz-firehose-request-id': 'huge-req' });
    expect(bombBody.status).toBe(413);
    expectFailure(bombBody.body, 'huge-req');

    const xml = await post(app.url, 'firehose', org.key, '<x/>', { ...hdr, 'content-type': 'application/xml' });
    expect(xml.status).toBe(415);
    expectFailure(xml.body, REQUEST_ID);
    expect(await storedEvents(app.url, org.key)).toEqual([]);
  });

  it.runIf(backendName === 'real')('answers 503 in Firehose shape with Retry-After while the database is unreachable', async () => {
    const target = new URL(backend.env.DATABASE_URL);
    const proxy = await startCuttableProxy(target.hostname, Number(target.port || 5432));
    const second = await startApp({ ...backend.env, DATABASE_URL: viaProxy(backend.env.DATABASE_URL, proxy.port) });
    try {
      const org = await createOrg(second.url);
      proxy.cut();
      const down = await post(second.url, 'firehose', org.key, fixture(BATCH), { 'x-amz-firehose-request-id': REQUEST_ID });
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('5');
      expectFailure(down.body, REQUEST_ID);
      proxy.restore();
      const before = Date.now();
      const retried = await post(second.url, 'firehose', org.key, fixture(BATCH), { 'x-amz-firehose-request-id': REQUEST_ID });
      expect(retried.status).toBe(200);
      expectAck(retried.body, REQUEST_ID, before);
    } finally {
      await second.close();
      await proxy.close();
    }
  });
});
