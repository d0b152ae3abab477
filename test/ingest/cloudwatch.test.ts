// POST /api/v1/ingest/cloudwatch against a real server, both backends: every accepted shape, field by field, the stream, retries, limits and errors.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, login, startApp } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';
import { bodyOf, columns, expectStreamedExactly, fixture, fixtureJson, ingestedEvents, post, postJson, startCuttableProxy, storedEvents, viaProxy } from './ingest-kit.js';

const GROUP = '/aws/lambda/mcp-gateway';
const STREAM = '2024/05/01/[$LATEST]4f6a9c1e2b7d4c0f8e3a1b2c3d4e5f60';
const REQ = '8f5d3c2a-1b4e-4f6a-9c8d-7e6f5a4b3c2d';
const SUB_REQ = '5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9';
const SUB_IDS = ['38254827467931648592356285437462949802543765413475926016', '38254827467931648592356285437462949802543765413475926017', '38254827467931648592356285437462949802543765413475926018'];
const BODY_LIMIT = 64 * 1024;
const MAX_ENTRIES = 50;

const call = (occurredAt: string, toolName: string, action: string | null, serverId: string | null, sessionId: string | null, latencyMs: number | null) => ({
  type: 'tool_call',
  source: 'cloudwatch',
  occurredAt,
  serverId,
  sessionId,
  toolName,
  action,
  latencyMs,
});
const log = (occurredAt: string, latencyMs: number | null = null) => ({ type: 'log', source: 'cloudwatch', occurredAt, serverId: null, sessionId: null, toolName: null, action: null, latencyMs });

/** Expected columns of the native subscription fixture, whichever way it arrives. */
const SUBSCRIPTION_COLUMNS = [
  call('2024-05-01T10:05:00.000Z', 'list_files', 'allow', 'mcp-fs', 'sess-9', 5),
  call('2024-05-01T10:05:00.450Z', 'read_file', 'redact', 'mcp-fs', null, 31),
  log('2024-05-01T10:05:00.470Z', 470),
];

describe.each(backendNames)('CloudWatch ingest (%s)', (backendName) => {
  const { app, backend } = suiteApp(backendName, { BODY_LIMIT_BYTES: String(BODY_LIMIT), INGEST_MAX_ENTRIES: String(MAX_ENTRIES) });

  it('stores Lambda text logs (spec body) field by field and streams only the tool calls', async () => {
    const org = await createOrg(app.url);
    const sse = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const r = await post(app.url, 'cloudwatch', org.key, fixture('cloudwatch/lambda-text-logs.json'));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ accepted: 5, duplicates: 0 });
    const items = await ingestedEvents(app.url, org.key);
    expect(items.map(columns)).toEqual([
      log('2024-05-01T10:00:00.000Z'),
      call('2024-05-01T10:00:00.012Z', 'search_docs', 'allow', 'mcp-docs', 'sess-42', 87),
      call('2024-05-01T10:00:00.020Z', 'run_shell', 'deny', 'mcp-shell', null, null),
      log('2024-05-01T10:00:00.031Z'),
      log('2024-05-01T10:00:00.031Z', 23),
    ]);
    const sent = fixtureJson('cloudwatch/lambda-text-logs.json').events;
    items.forEach((e, i) => {
      expect(e.metadata.source_detail).toBe(GROUP);
      expect(e.metadata.message).toBe(sent[i].message);
      expect(e.metadata.cloudwatch).toEqual({ logGroup: GROUP, logStream: STREAM });
      expect(e.metadata.payloadFormat).toBe('spec');
      expect(e.metadata.requestId).toBe(REQ);
      expect(e.metadata.rawAction).toBeUndefined();
    });
    expect(items.map((e) => e.metadata.traceId)).toEqual([REQ, REQ, REQ, REQ, '1-66321d40-5c3b1a2e9f8d7c6b5a4e3d2c']);
    expect(items.map((e) => e.metadata.format)).toEqual(['lambda-platform', 'logfmt', 'text', 'lambda-platform', 'lambda-platform']);
    expect(items.map((e) => e.metadata.level ?? null)).toEqual([null, 'INFO', 'WARN', null, null]);
    expect(items[1].metadata.fields).toEqual({ tool: 'search_docs', action: 'allowed', server: 'mcp-docs', session: 'sess-42', latency_ms: '87' });
    expect(items[4].metadata.fields).toMatchObject({ event: 'REPORT', durationMs: 23.45, billedDurationMs: 24, initDurationMs: 180.12 });
    await expectStreamedExactly(sse, app.url, org.key, await storedEvents(app.url, org.key));
  });

  it('stores Lambda JSON logs (spec body): nested fields, trace id precedence, unknown action words and the message timestamp fallback', async () => {
    const org = await createOrg(app.url);
    const sse = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const r = await post(app.url, 'cloudwatch', org.key, fixture('cloudwatch/lambda-json-logs.json'));
    expect(r.body).toEqual({ accepted: 4, duplicates: 0 });
    const items = await ingestedEvents(app.url, org.key);
    expect(items.map(columns)).toEqual([
      call('2024-05-01T10:05:00.123Z', 'create_ticket', 'redact', 'mcp-jira', 'sess-77', 143),
      call('2024-05-01T10:05:01.000Z', 'query_db', 'flag', 'mcp-sql', 'sess-77', 12),
      // No event timestamp was sent: the one inside the message is used.
      call('2024-05-01T10:05:02.345Z', 'send_email', null, null, null, null),
      log('2024-05-01T10:05:03.000Z'),
    ]);
    expect(items.map((e) => e.metadata.traceId)).toEqual(['4bf92f3577b34da6a3ce929d0e0e4736', 'abc123def4567890', '1-66321d41-1a2b3c4d5e6f708192a3b4c5', 'req-9c1e']);
    expect(items.map((e) => e.metadata.requestId ?? null)).toEqual(['c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f', 'c1d2e3f4-a5b6-4c7d-8e9f-0a1b2c3d4e5f', null, 'req-9c1e']);
    expect(items.map((e) => e.metadata.rawAction ?? null)).toEqual([null, null, 'quarantined', null]);
    expect(items.map((e) => e.metadata.level)).toEqual(['INFO', 'INFO', 'INFO', 'ERROR']);
    expect(items.every((e) => e.metadata.format === 'json' && e.metadata.source_detail === '/aws/lambda/mcp-gateway-json')).toBe(true);
    expect(items[0].metadata.fields.message.tool).toEqual({ name: 'create_ticket', args: { project: 'OPS' } });
    await expectStreamedExactly(sse, app.url, org.key, await storedEvents(app.url, org.key));
  });

  it('stores a native subscription payload sent with Content-Encoding: gzip, keeping ids, owner, filters, policy level and extracted fields', async () => {
    const org = await createOrg(app.url);
    const sse = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const r = await post(app.url, 'cloudwatch', org.key, fixture('cloudwatch/subscription-data-message.json.gz'), { 'content-encoding': 'gzip' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ accepted: 3, duplicates: 0 });
    const items = await ingestedEvents(app.url, org.key);
    expect(items.map(columns)).toEqual(SUBSCRIPTION_COLUMNS);
    const sent = fixtureJson('cloudwatch/subscription-data-message.json').logEvents;
    items.forEach((e, i) => {
      expect(e.metadata.source_detail).toBe(GROUP);
      expect(e.metadata.message).toBe(sent[i].message);
      expect(e.metadata.payloadFormat).toBe('subscription');
      expect(e.metadata.cloudwatch).toEqual({
        logGroup: GROUP,
        logStream: STREAM,
        eventId: SUB_IDS[i],
        owner: '123456789012',
        subscriptionFilters: ['mcp-audit-to-audit-stream'],
        messageType: 'DATA_MESSAGE',
        policyLevel: 'ACCOUNT_LEVEL_POLICY',
        ...(i === 1 ? { extractedFields: { level: 'INFO', request_id: SUB_REQ } } : {}),
      });
    });
    expect(items.map((e) => e.metadata.traceId)).toEqual([SUB_REQ, '5427869136521934021', SUB_REQ]);
    await expectStreamedExactly(sse, app.url, org.key, await storedEvents(app.url, org.key));
  });

  it('takes the same payload as a Lambda awslogs envelope and as a bare gzip body, and stores each event once across transports', async () => {
    const envOrg = await createOrg(app.url);
    const envelope = await post(app.url, 'cloudwatch', envOrg.key, fixture('cloudwatch/lambda-awslogs-event.json'));
    expect(envelope.body).toEqual({ accepted: 3, duplicates: 0 });
    const viaEnvelope = await ingestedEvents(app.url, envOrg.key);
    expect(viaEnvelope.map(columns)).toEqual(SUBSCRIPTION_COLUMNS);
    expect(viaEnvelope.map((e) => e.metadata.payloadFormat)).toEqual(['awslogs', 'awslogs', 'awslogs']);
    expect(viaEnvelope.map((e) => e.metadata.cloudwatch.eventId)).toEqual(SUB_IDS);

    const gz = fixture('cloudwatch/subscription-data-message.json.gz');
    for (const type of ['application/octet-stream', 'application/gzip', 'application/json']) {
      const again = await post(app.url, 'cloudwatch', envOrg.key, gz, { 'content-type': type });
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ accepted: 0, duplicates: 3 });
    }
    const plain = await post(app.url, 'cloudwatch', envOrg.key, fixture('cloudwatch/subscription-data-message.json'), { 'content-type': 'text/plain' });
    expect(plain.body).toEqual({ accepted: 0, duplicates: 3 });
    expect(await ingestedEvents(app.url, envOrg.key)).toHaveLength(3);
  });

  it('keeps 56-digit event ids sent as JSON numbers exactly (two ids that round to the same double stay distinct)', async () => {
    const org = await createOrg(app.url);
    const body = fixture('cloudwatch/subscription-numeric-ids.json');
    expect((await post(app.url, 'cloudwatch', org.key, body)).body).toEqual({ accepted: 2, duplicates: 0 });
    expect((await post(app.url, 'cloudwatch', org.key, body)).body).toEqual({ accepted: 0, duplicates: 2 });
    const items = await ingestedEvents(app.url, org.key);
    expect(items.map((e) => e.metadata.cloudwatch.eventId)).toEqual(['38254827467931648592356285437462949802543765413475926100', '38254827467931648592356285437462949802543765413475926101']);
    expect(items.map((e) => [e.toolName, e.action, e.serverId, e.occurredAt])).toEqual([
      ['browse', 'deny', 'mcp-web', '2024-05-01T10:06:40.000Z'],
      ['browse', 'allow', 'mcp-web', '2024-05-01T10:06:40.001Z'],
    ]);
  });

  it('acknowledges CONTROL_MESSAGE (bare and in the awslogs envelope) with 200 and stores nothing', async () => {
    const org = await createOrg(app.url);
    const control = fixture('cloudwatch/control-message.json');
    const bare = await post(app.url, 'cloudwatch', org.key, control);
    expect(bare.status).toBe(200);
    expect(bare.body).toEqual({ accepted: 0, duplicates: 0 });
    const wrapped = await postJson(app.url, 'cloudwatch', org.key, { awslogs: { data: gzipSync(control).toString('base64') } });
    expect(wrapped.body).toEqual({ accepted: 0, duplicates: 0 });
    expect(await storedEvents(app.url, org.key)).toEqual([]);
  });

  it('dedupes spec-body events only by an identity the sender gave: a real repeat is stored again; an Idempotency-Key retry answers the same counts', async () => {
    const org = await createOrg(app.url);
    const body = fixture('cloudwatch/lambda-json-logs.json');
    // No event id, no Idempotency-Key: identical lines are identical calls, and each is an audit record.
    expect((await post(app.url, 'cloudwatch', org.key, body)).body).toEqual({ accepted: 4, duplicates: 0 });
    expect((await post(app.url, 'cloudwatch', org.key, body)).body).toEqual({ accepted: 4, duplicates: 0 });
    expect(await ingestedEvents(app.url, org.key)).toHaveLength(8);
    // With a key, the retry (also gzip-encoded: the same request) stores nothing and answers the first counts.
    const key = { 'idempotency-key': 'cw-batch-0001' };
    expect((await post(app.url, 'cloudwatch', org.key, body, key)).body).toEqual({ accepted: 4, duplicates: 0 });
    expect((await post(app.url, 'cloudwatch', org.key, body, key)).body).toEqual({ accepted: 4, duplicates: 0 });
    expect((await post(app.url, 'cloudwatch', org.key, gzipSync(body), { ...key, 'content-encoding': 'gzip' })).body).toEqual({ accepted: 4, duplicates: 0 });
    const items = await ingestedEvents(app.url, org.key);
    expect(items).toHaveLength(12);
    expect(items.slice(8).map((e) => e.metadata.message)).toEqual(fixtureJson('cloudwatch/lambda-json-logs.json').events.map((e: { message: string }) => e.message));
    // The same key with another body is a client mistake: 422, nothing stored.
    const other = { ...fixtureJson('cloudwatch/lambda-json-logs.json'), logStream: 'another-stream' };
    const reused = await postJson(app.url, 'cloudwatch', org.key, other, key);
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe('idempotency_key_reused');
    expect(await ingestedEvents(app.url, org.key)).toHaveLength(12);
  });

  it('falls back to the receive time when neither the entry nor the message has a time, and keeps an unparseable timestamp in metadata', async () => {
    const org = await createOrg(app.url);
    const before = Date.now();
    const r = await postJson(app.url, 'cloudwatch', org.key, { logGroup: 'g', logStream: 's', events: [{ message: 'no time here', timestamp: 'yesterday-ish' }, { message: 'epoch ms works', timestamp: 1714557600000 }] });
    expect(r.body).toEqual({ accepted: 2, duplicates: 0 });
    const [a, b] = await ingestedEvents(app.url, org.key);
    expect(Date.parse(a.occurredAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(a.metadata.cloudwatch.invalidTimestamp).toBe('yesterday-ish');
    expect(b.occurredAt).toBe('2024-05-01T10:00:00.000Z');
  });

  it('stores text Postgres cannot hold (NUL, lone surrogates) with replacement characters instead of failing', async () => {
    const org = await createOrg(app.url);
    const r = await postJson(app.url, 'cloudwatch', org.key, {
      logGroup: 'g\u0000',
      logStream: 's',
      events: [
        { message: 'tool=nul\u0000tool action=allow', timestamp: '2024-05-01T10:00:00.000Z' },
        { message: '{"tool":"x\ud800","note":"\udfff"}', timestamp: '2024-05-01T10:00:00.000Z' },
        { id: 'id\u0000', message: '\ud83d', timestamp: '2024-05-01T10:00:00.000Z' },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ accepted: 3, duplicates: 0 });
    const items = await ingestedEvents(app.url, org.key);
    expect(items).toHaveLength(3);
    expect(items[0].metadata.message).toBe('tool=nul\uFFFDtool action=allow');
    expect(items[0].metadata.source_detail).toBe('g\uFFFD');
    expect(items[1].toolName).toBe('x\uFFFD');
    expect(items[2].metadata.message).toBe('\uFFFD');
  });

  it('answers 400 with issue paths for bodies of the wrong shape, and for bad awslogs data', async () => {
    const org = await createOrg(app.url);
    const missing = await postJson(app.url, 'cloudwatch', org.key, { logGroup: 'g', events: [{ message: 5, timestamp: '2024-05-01T10:00:00Z' }] });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ statusCode: 400, code: 'invalid_request' });
    expect(missing.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(['events.0.message', 'logStream']);
    const sub = await postJson(app.url, 'cloudwatch', org.key, { messageType: 'DATA_MESSAGE', logGroup: 'g', logStream: 's', logEvents: [{ id: '1', timestamp: 1, message: 'ok' }, { id: '2', timestamp: 2 }] });
    expect(sub.status).toBe(400);
    expect(sub.body.issues.map((i: { path: string }) => i.path)).toEqual(['logEvents.1.message']);
    for (const body of ['[]', '"text"', '42', 'null']) {
      const r = await post(app.url, 'cloudwatch', org.key, body);
      expect(r.status).toBe(400);
      expect(r.body.issues[0].path).toBe('(root)');
    }
    const invalidJson = await post(app.url, 'cloudwatch', org.key, '{"logGroup":');
    expect(invalidJson.status).toBe(400);
    expect(invalidJson.body.code).toBe('invalid_json');
    const empty = await post(app.url, 'cloudwatch', org.key, '');
    expect(empty.status).toBe(400);
    const deep = await post(app.url, 'cloudwatch', org.key, `{"logGroup":"g","logStream":"s","events":[],"x":${'['.repeat(100)}${']'.repeat(100)}}`);
    expect(deep.status).toBe(400);

    const badBase64 = await postJson(app.url, 'cloudwatch', org.key, { awslogs: { data: 'not base64 at all!' } });
    expect(badBase64.status).toBe(400);
    expect(badBase64.body.issues).toEqual([{ path: 'awslogs.data', message: expect.any(String) }]);
    const badGzip = await postJson(app.url, 'cloudwatch', org.key, { awslogs: { data: Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5]).toString('base64') } });
    expect(badGzip.status).toBe(400);
    expect(badGzip.body.issues[0].path).toBe('awslogs.data');
    const notJson = await postJson(app.url, 'cloudwatch', org.key, { awslogs: { data: gzipSync('plain words').toString('base64') } });
    expect(notJson.status).toBe(400);
    const innerShape = await postJson(app.url, 'cloudwatch', org.key, { awslogs: { data: gzipSync(JSON.stringify({ messageType: 'DATA_MESSAGE', logGroup: 'g', logStream: 's' })).toString('base64') } });
    expect(innerShape.status).toBe(400);
    expect(innerShape.body.issues[0].path).toBe('awslogs.data.logEvents');
    const noData = await postJson(app.url, 'cloudwatch', org.key, { awslogs: {} });
    expect(noData.status).toBe(400);
    expect(noData.body.issues[0].path).toBe('awslogs.data');
    const corruptBody = await post(app.url, 'cloudwatch', org.key, Buffer.from([0x1f, 0x8b, 8, 0, 9, 9, 9]), { 'content-type': 'application/octet-stream' });
    expect(corruptBody.status).toBe(400);
    const truncated = await post(app.url, 'cloudwatch', org.key, gzipSync(fixture('cloudwatch/lambda-text-logs.json')).subarray(0, 40), { 'content-encoding': 'gzip' });
    expect(truncated.status).toBe(400);
    expect(await storedEvents(app.url, org.key)).toEqual([]);
  });

  it('answers 413 JSON errors for a body over the limit, gzip bombs (header, envelope, bare) and too many entries', async () => {
    const org = await createOrg(app.url);
    const big = { logGroup: 'g', logStream: 's', events: [{ message: 'x'.repeat(BODY_LIMIT), timestamp: '2024-05-01T10:00:00Z' }] };
    const tooBig = await postJson(app.url, 'cloudwatch', org.key, big);
    expect(tooBig.status).toBe(413);
    expect(tooBig.body).toMatchObject({ statusCode: 413, code: 'payload_too_large' });
    const bomb = gzipSync(Buffer.from(JSON.stringify(big)));
    expect(bomb.length).toBeLessThan(BODY_LIMIT / 10);
    const viaHeader = await post(app.url, 'cloudwatch', org.key, bomb, { 'content-encoding': 'gzip' });
    expect(viaHeader.status).toBe(413);
    expect(viaHeader.body.code).toBe('payload_too_large');
    const viaEnvelope = await postJson(app.url, 'cloudwatch', org.key, { awslogs: { data: bomb.toString('base64') } });
    expect(viaEnvelope.status).toBe(413);
    const bare = await post(app.url, 'cloudwatch', org.key, bomb, { 'content-type': 'application/octet-stream' });
    expect(bare.status).toBe(413);
    const many = { logGroup: 'g', logStream: 's', events: Array.from({ length: MAX_ENTRIES + 1 }, (_, i) => ({ message: `line ${i}`, timestamp: '2024-05-01T10:00:00Z' })) };
    const tooMany = await postJson(app.url, 'cloudwatch', org.key, many);
    expect(tooMany.status).toBe(413);
    expect(tooMany.body.message).toContain('INGEST_MAX_ENTRIES');
    const manyEvents = many.events.map((e, i) => ({ id: String(i + 1), timestamp: 1714557600000, message: e.message }));
    const tooManyInEnvelope = await postJson(app.url, 'cloudwatch', org.key, { awslogs: { data: gzipSync(JSON.stringify({ messageType: 'DATA_MESSAGE', logGroup: 'g', logStream: 's', logEvents: manyEvents })).toString('base64') } });
    expect(tooManyInEnvelope.status).toBe(413);
    const atLimit = await postJson(app.url, 'cloudwatch', org.key, { ...many, events: many.events.slice(0, MAX_ENTRIES) });
    expect(atLimit.body).toEqual({ accepted: MAX_ENTRIES, duplicates: 0 });
  });

  it('answers 415 for content types and encodings it does not take', async () => {
    const org = await createOrg(app.url);
    const body = fixture('cloudwatch/lambda-text-logs.json');
    for (const type of ['application/xml', 'application/x-www-form-urlencoded', 'application/x-ndjson', 'multipart/form-data; boundary=x']) {
      const r = await post(app.url, 'cloudwatch', org.key, body, { 'content-type': type });
      expect(r.status, type).toBe(415);
      expect(r.body.code).toBe('unsupported_media_type');
    }
    const br = await post(app.url, 'cloudwatch', org.key, body, { 'content-encoding': 'br' });
    expect(br.status).toBe(415);
  });

  it('takes API keys only: 401 without one, with a bad one or with a login cookie; 403 without ingest:write', async () => {
    const org = await createOrg(app.url);
    const body = fixture('cloudwatch/lambda-text-logs.json');
    const none = await http(`${app.url}/api/v1/ingest/cloudwatch`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bodyOf(body) });
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('unauthorized');
    expect((await post(app.url, 'cloudwatch', 'ask_not-a-real-key', body)).status).toBe(401);
    const cookie = await login(app.url, org.email, org.password);
    const withCookie = await http(`${app.url}/api/v1/ingest/cloudwatch`, { method: 'POST', headers: { 'content-type': 'application/json', cookie, origin: app.url }, body: bodyOf(body) });
    expect(withCookie.status).toBe(401);
    const readOnly = await createOrg(app.url, { scopes: ['events:read'] });
    const denied = await post(app.url, 'cloudwatch', readOnly.key, body);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('missing_scope');
    expect(await storedEvents(app.url, org.key)).toEqual([]);
  });

  it.runIf(backendName === 'real')('answers 503 with Retry-After while the database is unreachable, and stores the retry once it is back', async () => {
    const target = new URL(backend.env.DATABASE_URL);
    const proxy = await startCuttableProxy(target.hostname, Number(target.port || 5432));
    const second = await startApp({ ...backend.env, DATABASE_URL: viaProxy(backend.env.DATABASE_URL, proxy.port) });
    try {
      const org = await createOrg(second.url);
      const body = fixture('cloudwatch/lambda-text-logs.json');
      proxy.cut();
      const down = await post(second.url, 'cloudwatch', org.key, body);
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('5');
      expect(down.body).toMatchObject({ statusCode: 503, code: 'storage_unavailable' });
      proxy.restore();
      const retried = await post(second.url, 'cloudwatch', org.key, body);
      expect(retried.body).toEqual({ accepted: 5, duplicates: 0 });
    } finally {
      await second.close();
      await proxy.close();
    }
  });
});
