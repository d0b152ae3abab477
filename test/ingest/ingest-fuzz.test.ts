// Property tests (fast-check) against a real server, both backends: no body makes a log ingest route answer 5xx or crash, and keyed retries store nothing new.
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, type Json, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { ingestedEvents, post, type Route } from './ingest-kit.js';

const BODY_LIMIT = 32 * 1024;
const MAX_ENTRIES = 40;
const ROUTES: Route[] = ['cloudwatch', 'firehose', 'datadog'];

// ---- arbitraries -------------------------------------------------------------------------------------------------

/** Text of every kind: printable, any UTF-16 (lone surrogates), NUL, and the shapes the normalizer looks for. */
const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    '\u0000',
    '\ud800',
    'tool=a\u0000 action=deny',
    '{"tool":"x\\ud800","latencyMs":1e308}',
    '{"tool":{"name":"t"},"decision":"blocked","server":{"id":"s"},"session_id":"s1","duration_ms":-5}',
    '2024-05-01T10:00:00.000Z\treq\tINFO\t{"tool":"t","action":"???"}',
    'REPORT RequestId: r\tDuration: 99999999999999 ms\t',
    'START RequestId: x Version: $LATEST',
    '%%%\n{"tool":"y"}\n%%%',
    'traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 Root=1-66321d40-5c3b1a2e9f8d7c6b5a4e3d2c',
    `{"a":${'['.repeat(70)}${']'.repeat(70)}}`,
  ),
);

const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 4 });

/** Timestamps valid and not: ISO, epoch ms/s, out of range, garbage. */
const timestampish = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.constantFrom(1714557600000, '1714557600', -1, 1e300, '9999-12-31T23:59:59.999Z', '0000-01-01T00:00:00Z', '+275760-09-13T00:00:00.000Z'),
  anyText,
  fc.constant(null),
);

/** Text that is never blank (for fields that must not be). */
const someText = anyText.map((t) => `x${t}`);

/** Valid event ids: strings, safe integers, and integers beyond 2^53 written as JSON numbers (see toJsonText). */
const eventId = fc.oneof(someText, fc.nat(), fc.bigInt({ min: 0n, max: 10n ** 60n }).map((b) => `__BIG__${b}`));

/** JSON text, with "__BIG__<digits>" strings turned into bare integer literals. */
function toJsonText(value: unknown): string {
  return JSON.stringify(value).replace(/"__BIG__(\d+)"/g, '$1');
}

/** Mostly `valid` (so the storing path runs), sometimes `broken` (so validation runs). */
function mostly<T>(valid: fc.Arbitrary<T>, broken: fc.Arbitrary<T>): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: valid, weight: 4 }, { arbitrary: broken, weight: 1 });
}

const specBody = mostly<Record<string, unknown>>(
  fc.record({
    logGroup: someText,
    logStream: someText,
    events: fc.array(fc.record({ message: anyText, timestamp: timestampish, id: eventId }, { requiredKeys: ['message'] }), { maxLength: MAX_ENTRIES + 2 }),
  }),
  fc.record({ logGroup: anyJson, logStream: anyText, events: fc.oneof(fc.array(anyJson, { maxLength: 3 }), anyJson) }, { requiredKeys: [] }),
);

const logEvent = fc.record({ id: eventId, timestamp: timestampish, message: anyText, extractedFields: fc.dictionary(fc.string(), anyJson, { maxKeys: 3 }) }, { requiredKeys: ['message'] });

const subscriptionPayload = mostly<Record<string, unknown>>(
  fc.record(
    {
      messageType: fc.constantFrom('DATA_MESSAGE', 'DATA_MESSAGE', 'DATA_MESSAGE', 'CONTROL_MESSAGE'),
      owner: fc.string({ maxLength: 20 }),
      logGroup: anyText,
      logStream: anyText,
      subscriptionFilters: fc.array(anyText, { maxLength: 3 }),
      policyLevel: fc.string({ maxLength: 20 }),
      logEvents: fc.array(logEvent, { maxLength: 8 }),
    },
    { requiredKeys: ['logGroup', 'logStream', 'logEvents'] },
  ),
  fc.record(
    { messageType: anyText, owner: anyJson, logGroup: anyJson, logStream: anyText, subscriptionFilters: anyJson, logEvents: fc.oneof(fc.array(anyJson, { maxLength: 3 }), anyJson) },
    { requiredKeys: [] },
  ),
);

/** What base64 `data` may hold: gzipped or plain payloads, random (gzipped) bytes, or not base64 at all. */
const encodedData = fc.oneof(
  { arbitrary: subscriptionPayload.map((p) => gzipSync(toJsonText(p)).toString('base64')), weight: 4 },
  subscriptionPayload.map((p) => Buffer.from(toJsonText(p)).toString('base64')),
  anyText.map((t) => Buffer.from(t).toString('base64')),
  fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString('base64')),
  fc.uint8Array({ maxLength: 200 }).map((b) => gzipSync(b).toString('base64')),
  fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.concat([Buffer.from([0x1f, 0x8b]), b]).toString('base64')),
  fc.constant(gzipSync(Buffer.alloc(BODY_LIMIT * 3, 0x20)).toString('base64')),
  anyText,
);

const cloudwatchBody = fc.oneof(
  { arbitrary: specBody.map(toJsonText), weight: 3 },
  { arbitrary: subscriptionPayload.map(toJsonText), weight: 3 },
  { arbitrary: fc.record({ awslogs: mostly<unknown>(fc.record({ data: encodedData }), anyJson) }).map(toJsonText), weight: 3 },
  { arbitrary: anyJson.map((v) => JSON.stringify(v)), weight: 1 },
);

const firehoseBody = mostly<Record<string, unknown>>(
  fc.record(
    { requestId: someText, timestamp: fc.oneof(fc.nat(), fc.constant(Date.now())), records: fc.array(mostly<unknown>(fc.record({ data: encodedData }), anyJson), { maxLength: 6 }) },
    { requiredKeys: ['records'] },
  ),
  fc.record({ requestId: anyJson, timestamp: timestampish, records: anyJson }, { requiredKeys: [] }),
).map(toJsonText);

const DATADOG_KEYS = ['title', 'type', 'tags', 'body', 'text', 'timestamp', 'last_updated', 'event_type', 'date', 'org', 'id', 'alert_transition', 'alert_id', 'hostname', 'priority', 'link', 'extra_field'];
const datadogValid = fc.record(
  {
    title: anyText,
    body: fc.oneof(anyText, fc.dictionary(fc.string(), anyJson, { maxKeys: 3 })),
    tags: fc.oneof(anyText, fc.array(anyText, { maxLength: 5 })),
    type: anyText,
    event_type: anyText,
    timestamp: timestampish,
    last_updated: timestampish,
    date: timestampish,
    id: eventId,
    org: fc.oneof(fc.record({ id: eventId, name: anyText }, { requiredKeys: [] }), anyText),
    alert_id: eventId,
    hostname: anyText,
    extra_field: anyJson,
  },
  { requiredKeys: ['title'] },
);
const datadogBody = mostly<unknown>(datadogValid, fc.oneof(fc.dictionary(fc.constantFrom(...DATADOG_KEYS), anyJson, { maxKeys: 8 }), anyJson)).map(toJsonText);
const datadogForm = fc.dictionary(fc.constantFrom(...DATADOG_KEYS, 'x'), fc.string({ unit: 'binary', maxLength: 30 }), { maxKeys: 6 }).map((d) => new URLSearchParams(d).toString());

const contentType = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/octet-stream',
    'application/gzip',
    'application/x-ndjson',
    'multipart/form-data',
    'application/xml',
    'application/x-amz-json-1.1',
  ),
  fc.stringMatching(/^[a-z]{1,8}\/[a-z0-9.+-]{1,12}$/),
);
const contentEncoding = fc.constantFrom(undefined, 'gzip', 'x-gzip', 'deflate', 'br', 'identity', 'zstd');

// ---- checks -------------------------------------------------------------------------------------------------------

/** The answer is never 5xx and always a JSON object of the route's shape. */
function expectWellFormedAnswer(route: Route, r: Json, what: string) {
  expect(r.status, `${what} -> ${r.status} ${JSON.stringify(r.body)}`).toBeLessThan(500);
  expect([200, 400, 413, 415], what).toContain(r.status);
  expect(typeof r.body, what).toBe('object');
  if (route === 'firehose') {
    expect(Object.keys(r.body).sort(), what).toEqual(r.status === 200 ? ['requestId', 'timestamp'] : ['errorMessage', 'requestId', 'timestamp']);
  } else if (r.status === 200) {
    expect(Object.keys(r.body).sort(), what).toEqual(['accepted', 'duplicates']);
  } else {
    expect(r.body, what).toMatchObject({ statusCode: r.status, code: expect.any(String), message: expect.any(String) });
  }
}

describe.each(backendNames)('ingest routes under random input (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { BODY_LIMIT_BYTES: String(BODY_LIMIT), INGEST_MAX_ENTRIES: String(MAX_ENTRIES), LOG_LEVEL: 'warn' });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  const send = (route: Route, body: string | Uint8Array, headers: Record<string, string> = {}) => post(app.url, route, org.key, body, headers);

  it('never answers 5xx to random CloudWatch-like JSON (spec bodies, subscription payloads, awslogs envelopes, any JSON)', async () => {
    await fc.assert(
      fc.asyncProperty(cloudwatchBody, fc.boolean(), async (body, gzip) => {
        const r = gzip ? await send('cloudwatch', gzipSync(body), { 'content-encoding': 'gzip' }) : await send('cloudwatch', body);
        expectWellFormedAnswer('cloudwatch', r, body.slice(0, 300));
      }),
      { numRuns: 150 },
    );
  });

  it('never answers 5xx to random Firehose-like JSON (records of random data, gzipped or not, not base64, bombs)', async () => {
    await fc.assert(
      fc.asyncProperty(firehoseBody, async (body) => {
        expectWellFormedAnswer('firehose', await send('firehose', body), body.slice(0, 300));
      }),
      { numRuns: 120 },
    );
  });

  it('never answers 5xx to random Datadog-like JSON and form bodies', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(datadogBody.map((b) => [b, 'application/json'] as const), datadogForm.map((b) => [b, 'application/x-www-form-urlencoded'] as const)), async ([body, type]) => {
        expectWellFormedAnswer('datadog', await send('datadog', body, { 'content-type': type }), `${type} ${body.slice(0, 300)}`);
      }),
      { numRuns: 150 },
    );
  });

  it('never answers 5xx to random bytes with random content types and encodings, gzipped or not', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.oneof(fc.uint8Array({ maxLength: 400 }), fc.uint8Array({ maxLength: 400 }).map((b) => new Uint8Array(gzipSync(b))), anyText.map((t) => new Uint8Array(Buffer.from(t)))),
        contentType,
        contentEncoding,
        async (route, bytes, type, encoding) => {
          const headers: Record<string, string> = { 'content-type': type };
          if (encoding) headers['content-encoding'] = encoding;
          expectWellFormedAnswer(route, await send(route, bytes, headers), `${route} ${type} ${encoding} ${Buffer.from(bytes).toString('hex').slice(0, 200)}`);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('answers the same counts and stores nothing new when an accepted request is retried with its Idempotency-Key', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(cloudwatchBody.map((b) => ['cloudwatch', b] as const), datadogBody.map((b) => ['datadog', b] as const)), async ([route, body]) => {
        const own = await createOrg(app.url, { scopes: ['ingest:write', 'events:read'] });
        const key = { 'idempotency-key': `fuzz-${backendName}-${++n}` };
        const first = await post(app.url, route, own.key, body, key);
        if (first.status !== 200) return;
        const stored = await ingestedEvents(app.url, own.key);
        expect(stored).toHaveLength(first.body.accepted);
        const again = await post(app.url, route, own.key, body, key);
        expect(again.status).toBe(200);
        expect(again.body).toEqual(first.body);
        expect(await ingestedEvents(app.url, own.key)).toEqual(stored);
      }),
      { numRuns: 60 },
    );
  });

  it('stores nothing new when a random Firehose request is retried', async () => {
    await fc.assert(
      fc.asyncProperty(firehoseBody, async (body) => {
        const own = await createOrg(app.url, { scopes: ['ingest:write', 'events:read'] });
        const first = await post(app.url, 'firehose', own.key, body, { 'x-amz-firehose-request-id': 'fuzz-req' });
        if (first.status !== 200) return;
        const stored = await ingestedEvents(app.url, own.key);
        expect((await post(app.url, 'firehose', own.key, body, { 'x-amz-firehose-request-id': 'fuzz-req' })).status).toBe(200);
        expect(await ingestedEvents(app.url, own.key)).toEqual(stored);
      }),
      { numRuns: 30 },
    );
  });

  it('is still ready afterwards, and the events it stored can be listed', async () => {
    const ready = await http(`${app.url}/readyz`);
    expect(ready.status).toBe(200);
    const page = await http(`${app.url}/api/v1/audit-events?limit=1000`, { headers: bearer(org.key) });
    expect(page.status).toBe(200);
    const ok = await post(app.url, 'cloudwatch', org.key, JSON.stringify({ logGroup: 'after', logStream: 's', events: [{ message: `tool=after-${backendName}`, timestamp: new Date().toISOString() }] }));
    expect(ok.body).toEqual({ accepted: 1, duplicates: 0 });
  });
});
