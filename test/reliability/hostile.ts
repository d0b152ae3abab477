// Hostile input for the fuzz tests: fast-check arbitraries of strings, JSON values, bodies, headers and query strings, and a raw-bytes HTTP client.
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';

/** Strings that break things: NUL, lone surrogates, prototype keys, injections, numbers and dates out of range, very long. */
export const nastyConstants = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ufeff',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '%00',
  '%ZZ',
  '%C0%80',
  '../../../../etc/passwd',
  "' OR '1'='1' --",
  '"; DROP TABLE audit_events; --',
  '<script>alert(1)</script>',
  '${jndi:ldap://127.0.0.1/x}',
  '\r\nX-Injected: 1',
  '1e309',
  '-1',
  '-0',
  'NaN',
  'Infinity',
  '9'.repeat(400),
  '0x1F',
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00.000Z',
  '0000-01-01T00:00:00Z',
  '1969-12-31T23:59:59.999Z',
  '9999-12-31T23:59:59.999Z',
  '10000-01-01T00:00:00Z',
  '2024-02-30T25:61:61Z',
  '8640000000000001',
  'x'.repeat(5000),
  '💥'.repeat(300),
  'ask_' + 'A'.repeat(43),
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
];

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...nastyConstants), weight: 3 },
  { arbitrary: fc.string({ maxLength: 30 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }), weight: 1 },
  { arbitrary: fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })).map(([a, b]) => `${a}\u0000${b}`), weight: 1 },
  { arbitrary: fc.nat({ max: 200_000 }).map((n) => 'y'.repeat(n)), weight: 1 },
);

/** Numbers JSON can carry, and more: huge, tiny, negative zero, unsafe integers (written as literals by toJsonText). */
export const nastyNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1e308, -1e308, 5e-324, 2 ** 31, 2 ** 31 - 1, 2 ** 53, -(2 ** 53), Number.MAX_SAFE_INTEGER),
  fc.bigInt({ min: -(10n ** 400n), max: 10n ** 400n }).map((b) => `__NUM__${b}`),
  fc.constantFrom('__NUM__1e400', '__NUM__-1e400', '__NUM__1.5e-400', '__NUM__123456789012345678901234567890.5'),
);

const leaf: fc.Arbitrary<unknown> = fc.oneof(nastyString, nastyNumber, fc.boolean(), fc.constant(null));

/** JSON values of any shape, with prototype-polluting keys among the object keys. */
export const nastyValue: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', ''), fc.string({ maxLength: 10 })), tie('v'), { maxKeys: 4 }),
  ),
})).v;

/** JSON text of a value, with "__NUM__<literal>" strings written as bare number literals and "__proto__" kept as an own key. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value).replace(/"__NUM__([-0-9.e+]+)"/g, '$1');
}

/** An object shaped like a route's body: its own fields with nasty values, sometimes extra keys (incl. __proto__). */
export function bodyLike(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const all: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [k, arb] of Object.entries(fields)) all[k] = fc.oneof({ arbitrary: arb, weight: 3 }, { arbitrary: nastyValue, weight: 1 });
  return fc
    .tuple(fc.record(all, { requiredKeys: [] }), fc.dictionary(fc.constantFrom('__proto__', 'constructor', 'extra', 'orgId', 'org_id', 'id', 'isAdmin'), nastyValue, { maxKeys: 2 }))
    .map(([own, extra]) => {
      const out: Record<string, unknown> = {};
      // defineProperty keeps "__proto__" as an own, serialized key.
      for (const [k, v] of Object.entries({ ...own, ...extra })) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    });
}

export interface RawBody {
  bytes: Uint8Array;
  contentType: string | null;
  contentEncoding: string | null;
  what: string;
}

const enc = (s: string) => new Uint8Array(Buffer.from(s));

/**
 * Bodies for a route: `valid` (the route's shape, as JSON) mostly, plus malformed JSON, wrong types, huge numbers,
 * deeply nested or huge arrays, invalid UTF-8, gzip (valid, invalid, bombs), and any content type.
 */
export function nastyBody(valid: fc.Arbitrary<unknown>, limitBytes: number): fc.Arbitrary<RawBody> {
  const json = (what: string) => (text: string): RawBody => ({ bytes: enc(text), contentType: 'application/json', contentEncoding: null, what: `${what}: ${text.slice(0, 200)}` });
  const contentType = fc.constantFrom(
    null,
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=latin1',
    'APPLICATION/JSON',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=xyz',
    'application/x-ndjson',
    'application/octet-stream',
    'application/xml',
    'application/json, text/plain',
    ';;;',
    'x'.repeat(300),
  );
  return fc.oneof(
    { arbitrary: valid.map(toJsonText).map(json('shaped')), weight: 6 },
    { arbitrary: nastyValue.map(toJsonText).map(json('any JSON')), weight: 3 },
    // Malformed JSON: valid text cut short, or with garbage spliced in.
    { arbitrary: fc.tuple(valid.map(toJsonText), fc.nat(), fc.constantFrom('', '}', ',', '"', '\\', 'x', '\u0000', '{{', ']]')).map(([t, n, g]) => json('malformed')(t.slice(0, n % (t.length + 1)) + g)), weight: 3 },
    { arbitrary: fc.constantFrom('', ' ', 'null', 'true', '0', '""', '[]', '{}', '{"a":1}{"b":2}', '{"__proto__":{"isAdmin":true}}', '{"constructor":{"prototype":{"x":1}}}', '\ufeff{}').map(json('edge')), weight: 2 },
    // Deep nesting and huge arrays (up to and past the body limit).
    { arbitrary: fc.integer({ min: 1000, max: 100_000 }).map((d) => json(`nested ${d}`)('['.repeat(d) + ']'.repeat(d))), weight: 1 },
    { arbitrary: fc.integer({ min: 1000, max: 50_000 }).map((d) => json(`nested objects ${d}`)('{"a":'.repeat(d) + '1' + '}'.repeat(d))), weight: 1 },
    { arbitrary: fc.integer({ min: 10_000, max: Math.ceil(limitBytes / 2) + 1000 }).map((n) => json(`array of ${n}`)(`[${'0,'.repeat(n)}0]`)), weight: 1 },
    // Bytes that are not UTF-8, under any content type.
    {
      arbitrary: fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 300 }), contentType).map(([b, ct]): RawBody => ({ bytes: b, contentType: ct, contentEncoding: null, what: `bytes ${Buffer.from(b).toString('hex').slice(0, 100)} as ${ct}` })),
      weight: 2,
    },
    { arbitrary: fc.constantFrom(enc('{"a":"\xff\xfe"}'), new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0x80, 0x22, 0x7d]), new Uint8Array([0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00])).map((b): RawBody => ({ bytes: b, contentType: 'application/json', contentEncoding: null, what: 'invalid UTF-8 JSON' })), weight: 1 },
    // The right shape under another content type.
    { arbitrary: fc.tuple(valid.map(toJsonText), contentType).map(([t, ct]): RawBody => ({ bytes: enc(t), contentType: ct, contentEncoding: null, what: `shaped as ${ct}` })), weight: 2 },
    // gzip: valid, declared but not gzip, truncated, bombs, unknown encodings.
    {
      arbitrary: fc.tuple(valid.map(toJsonText), fc.constantFrom('gzip', 'x-gzip', 'deflate', 'br', 'zstd', 'gzip, gzip', 'identity', 'GZIP')).map(([t, e]): RawBody => ({ bytes: new Uint8Array(gzipSync(t)), contentType: 'application/json', contentEncoding: e, what: `gzip as ${e}: ${t.slice(0, 100)}` })),
      weight: 2,
    },
    { arbitrary: fc.uint8Array({ maxLength: 200 }).map((b): RawBody => ({ bytes: new Uint8Array(Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08]), b])), contentType: 'application/json', contentEncoding: 'gzip', what: 'invalid gzip' })), weight: 1 },
    { arbitrary: valid.map(toJsonText).map((t): RawBody => ({ bytes: new Uint8Array(gzipSync(t)).slice(0, -6), contentType: 'application/json', contentEncoding: 'gzip', what: 'truncated gzip' })), weight: 1 },
    { arbitrary: fc.constant(null).map((): RawBody => ({ bytes: GZIP_BOMB, contentType: 'application/json', contentEncoding: 'gzip', what: 'gzip bomb (64 MiB of spaces)' })), weight: 1 },
    { arbitrary: fc.constant(null).map((): RawBody => ({ bytes: GZIP_JSON_BOMB, contentType: 'application/json', contentEncoding: 'gzip', what: 'gzip bomb of a JSON array' })), weight: 1 },
  );
}

/** 64 MiB of spaces in about 64 KiB of gzip. */
export const GZIP_BOMB = new Uint8Array(gzipSync(Buffer.alloc(64 * 1024 * 1024, 0x20), { level: 9 }));
/** A JSON array of 8 million zeros, gzipped. */
export const GZIP_JSON_BOMB = new Uint8Array(gzipSync(`[${'0,'.repeat(8 * 1024 * 1024)}0]`, { level: 9 }));

/** Query strings: the route's own keys and others, nasty values, repeated keys, bracket and prototype keys, broken escapes. */
export function nastyQuery(keys: string[]): fc.Arbitrary<string> {
  const key = fc.oneof({ arbitrary: fc.constantFrom(...keys), weight: 4 }, { arbitrary: fc.constantFrom('__proto__', 'constructor', 'constructor[prototype]', 'a[b]', 'limit[]', ''), weight: 1 });
  const value = fc.oneof(nastyString.map((s) => s.slice(0, 3000)), nastyNumber.map((n) => String(n).replace('__NUM__', '')), fc.constantFrom('1', '0', '1000', '1001', 'asc', 'desc', 'tool_call', 'anomaly,session_update', 'active', 'suspended'));
  const pair = fc.tuple(key, value, fc.boolean()).map(([k, v, raw]) => (raw ? `${k}=${v.replace(/[#&\s]/g, '')}` : `${encodeURIComponent(k)}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '?'))}`));
  return fc.oneof(
    fc.array(pair, { maxLength: 5 }).map((ps) => (ps.length ? `?${ps.join('&')}` : '')),
    fc.constantFrom('?', '?&&&', '?=', '?a', '?%', '?%ZZ=1', '?limit=%C0%80', '?x=%ff%fe', `?${'a=1&'.repeat(2000)}`, '?limit=1&limit=2', '?types=tool_call&types=anomaly'),
  );
}

export interface RawResponse {
  status: number;
  head: string;
  body: string;
}

/** Sends bytes as an HTTP request over a plain socket (for what fetch refuses to send) and reads the answer. */
export function rawHttp(port: number, request: Uint8Array, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      finish();
    }, timeoutMs);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (!m) return reject(new Error(`no HTTP answer (${text.length} bytes: ${JSON.stringify(text.slice(0, 100))})`));
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(m[1]), head: text.slice(0, split), body: text.slice(split + 4) });
    };
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', finish);
    socket.write(request);
  });
}
