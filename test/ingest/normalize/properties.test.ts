// Property tests: the normalizers never throw on arbitrary input and always return well-typed results.
import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  ACTION_VOCABULARY,
  mapAction,
  normalizeDatadog,
  normalizeMessage,
  parseDatadogTags,
  parseLogfmt,
  parseTimestamp,
  type Action,
  type Normalized,
} from '../../../src/ingest/normalize/index.js';
import { analyzeMessage } from '../../../src/ingest/normalize/message.js';

const ACTIONS = new Set(['allow', 'deny', 'redact', 'flag']);
const FORMATS = new Set(['json', 'logfmt', 'lambda-platform', 'text', 'datadog']);
const MIN_MS = 0;
const MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function expectIdOrNull(value: unknown): void {
  if (value === null) return;
  expect(typeof value).toBe('string');
  expect((value as string).length).toBeGreaterThan(0);
  expect((value as string).length).toBeLessThanOrEqual(200);
}

function expectNormalized(n: Normalized): void {
  expectIdOrNull(n.toolName);
  expectIdOrNull(n.serverId);
  expectIdOrNull(n.sessionId);
  expectIdOrNull(n.traceId);
  expectIdOrNull(n.requestId);
  expectIdOrNull(n.rawAction);
  expectIdOrNull(n.level);
  expect(n.action === null || ACTIONS.has(n.action)).toBe(true);
  if (n.action !== null) expect(n.rawAction).toBeNull();
  if (n.latencyMs !== null) {
    expect(Number.isSafeInteger(n.latencyMs)).toBe(true);
    expect(n.latencyMs).toBeGreaterThanOrEqual(0);
  }
  expect(FORMATS.has(n.format)).toBe(true);
  expect(typeof n.fields).toBe('object');
  expect(n.fields).not.toBeNull();
  expect(Array.isArray(n.fields)).toBe(false);
  if (n.format === 'text') expect(n.fields).toEqual({});
  if (n.timestamp !== null) {
    expect(n.timestamp).toBeInstanceOf(Date);
    expect(n.timestamp.getTime()).toBeGreaterThanOrEqual(MIN_MS);
    expect(n.timestamp.getTime()).toBeLessThanOrEqual(MAX_MS);
  }
  expect(() => JSON.stringify(n)).not.toThrow();
}

function expectTags(tags: Record<string, string[]>): void {
  expect(Object.getPrototypeOf(tags)).toBe(Object.prototype);
  for (const key of Object.keys(tags)) {
    expect(key.length).toBeGreaterThan(0);
    expect(Array.isArray(tags[key])).toBe(true);
    for (const value of tags[key]) expect(typeof value).toBe('string');
  }
}

const SPELLINGS = [
  'tool', 'toolName', 'tool_name', 'name', 'action', 'decision', 'verdict', 'outcome', 'server', 'serverId', 'server_id', 'mcp_server',
  'id', 'sessionId', 'session_id', 'latencyMs', 'latency_ms', 'duration_ms', 'durationMs', 'traceId', 'trace_id', 'dd.trace_id', 'dd',
  'traceparent', 'requestId', 'request_id', 'aws_request_id', 'awsRequestId', 'level', 'timestamp', 'time', '@timestamp', 'ts',
  'message', 'msg', 'method', 'params', '__proto__', 'constructor', 'prototype', 'toString',
];

/** JSON objects whose keys are often the recognized spellings, at any nesting. */
const logLikeObject = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue(),
    fc.constantFrom('allow', 'denied', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'Root=1-5759e988-bd862e3fe1be46a994272793'),
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(Number),
    tie('object'),
  ),
  object: fc.dictionary(fc.oneof(fc.constantFrom(...SPELLINGS), fc.string()), tie('value'), { maxKeys: 6 }),
}));

const lambdaPrefix = fc.constantFrom('', '2024-05-01T10:00:00.000Z\t3b8c0f2e-1b2a-4c3d-9e8f-0a1b2c3d4e5f\tINFO\t', '[ERROR]\t2024-05-01T10:00:00.000Z\tNone\t');

const logfmtLine = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...SPELLINGS), fc.string()), fc.oneof(fc.string(), fc.string({ unit: 'binary' }))), { maxLength: 8 })
  .map((pairs) => pairs.map(([k, v]) => `${k}=${/[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v}`).join(' '));

const anyMessage = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.json(),
  fc.tuple(lambdaPrefix, logLikeObject.object.map((o) => JSON.stringify(o))).map(([p, j]) => p + j),
  fc.tuple(lambdaPrefix, logfmtLine).map(([p, l]) => p + l),
  fc.string().map((s) => `REPORT RequestId: ${s}\tDuration: ${s} ms\tXRAY TraceId: ${s}`),
  fc.string({ unit: 'binary' }).map((s) => `START RequestId: ${s} Version: $LATEST`),
);

describe('properties', () => {
  it('normalizeMessage never throws and returns well-typed results', () => {
    fc.assert(
      fc.property(anyMessage, (message) => {
        expectNormalized(normalizeMessage(message));
      }),
      { numRuns: 1500 },
    );
  });

  it('reaches its results without relying on the last-resort catch', () => {
    fc.assert(
      fc.property(anyMessage, (message) => {
        expect(() => analyzeMessage(message)).not.toThrow();
      }),
      { numRuns: 1500 },
    );
  });

  it('normalizeMessage survives non-string input', () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        expectNormalized(normalizeMessage(value as string));
      }),
    );
  });

  it('normalizeDatadog never throws and returns well-typed results', () => {
    const tags = fc.oneof(fc.string(), fc.array(fc.string()), fc.constant(null), fc.constant(undefined), fc.anything());
    const text = fc.oneof(anyMessage, anyMessage.map((m) => `%%%\n${m}\n%%%`), fc.constant(null), fc.anything());
    fc.assert(
      fc.property(fc.record({ title: text, body: text, tags }, { requiredKeys: [] }), (input) => {
        const result = normalizeDatadog(input as Parameters<typeof normalizeDatadog>[0]);
        expectNormalized(result);
        expect(result.format).toBe('datadog');
        expectTags(result.tags);
        expect(result.service === null || typeof result.service === 'string').toBe(true);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.anything(), (input) => {
        expectNormalized(normalizeDatadog(input as Parameters<typeof normalizeDatadog>[0]));
      }),
    );
  });

  it('parseDatadogTags never throws and returns string arrays', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.array(fc.string({ unit: 'binary' })), fc.anything()), (tags) => {
        expectTags(parseDatadogTags(tags as string));
      }),
    );
  });

  it('parseDatadogTags reads back key:value tags', () => {
    const key = fc.stringMatching(/^[a-z][a-z0-9_.-]{0,19}$/);
    const value = fc.stringMatching(/^[a-z0-9_.:/-]{0,20}$/);
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(key, value), { selector: ([k]) => k, maxLength: 10 }), fc.constantFrom(',', ', ', ' '), (pairs, sep) => {
        const parsed = parseDatadogTags(pairs.map(([k, v]) => `${k}:${v}`).join(sep));
        expect(parsed).toEqual(Object.fromEntries(pairs.map(([k, v]) => [k, [v]])));
      }),
    );
  });

  it('parseTimestamp never throws and returns an in-range Date or null', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.string(), fc.double(), fc.integer(), fc.date({ noInvalidDate: false }), fc.bigInt()), (value) => {
        const date = parseTimestamp(value);
        if (date !== null) {
          expect(date).toBeInstanceOf(Date);
          expect(date.getTime()).toBeGreaterThanOrEqual(MIN_MS);
          expect(date.getTime()).toBeLessThanOrEqual(MAX_MS);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('parseTimestamp reads back ISO strings, epoch milliseconds and epoch seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1e11, max: MAX_MS }), (ms) => {
        expect(parseTimestamp(ms)?.getTime()).toBe(ms);
        expect(parseTimestamp(String(ms))?.getTime()).toBe(ms);
        expect(parseTimestamp(new Date(ms).toISOString())?.getTime()).toBe(ms);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e11 - 1 }), (s) => {
        expect(parseTimestamp(s)?.getTime()).toBe(s * 1000);
        expect(parseTimestamp(`${s}.5`)?.getTime()).toBe(s * 1000 + 500);
      }),
    );
  });

  it('parseLogfmt never throws and reads back what it is given', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.anything()), (line) => {
        const parsed = parseLogfmt(line as string);
        if (parsed !== null) for (const v of Object.values(parsed)) expect(typeof v).toBe('string');
      }),
    );
    const key = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,15}$/);
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(key, fc.string({ unit: 'binary' })), { selector: ([k]) => k, minLength: 1, maxLength: 8 }), (pairs) => {
        const line = pairs.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(' ');
        expect(parseLogfmt(line)).toEqual(Object.fromEntries(pairs));
      }),
    );
  });

  it('mapAction maps every vocabulary word in any case and padding', () => {
    const entries = (Object.keys(ACTION_VOCABULARY) as Action[]).flatMap((a) => ACTION_VOCABULARY[a].map((w) => [w, a] as const));
    fc.assert(
      fc.property(fc.constantFrom(...entries), fc.array(fc.boolean()), fc.constantFrom('', ' ', '\t', '\n '), ([word, action], upper, pad) => {
        const cased = [...word].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');
        expect(mapAction(pad + cased + pad)).toEqual({ action, rawAction: null });
      }),
    );
  });

  it('mapAction keeps any other word, trimmed and truncated', () => {
    const words = new Set(Object.values(ACTION_VOCABULARY).flat());
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary', maxLength: 400 })), (word) => {
        const result = mapAction(word);
        const trimmed = word.trim();
        if (!trimmed) expect(result).toEqual({ action: null, rawAction: null });
        else if (words.has(trimmed.toLowerCase())) expect(result.action).not.toBeNull();
        else {
          expect(result.action).toBeNull();
          expect(trimmed.startsWith(result.rawAction!)).toBe(true);
          expect(result.rawAction!.length).toBeLessThanOrEqual(200);
        }
      }),
    );
  });

  it('never pollutes Object.prototype', () => {
    const hostile = fc.constantFrom(
      '{"__proto__":{"polluted":1},"tool":{"__proto__":{"polluted":1}}}',
      '__proto__=1 constructor=2 prototype=3',
      '{"constructor":{"prototype":{"polluted":1}}}',
    );
    fc.assert(
      fc.property(hostile, (message) => {
        normalizeMessage(message);
        normalizeDatadog({ body: message, tags: '__proto__:polluted' });
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
    );
  });
});
