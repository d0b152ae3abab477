// Each built-in profile against its fixture (the emitter's own records, decoded by the OTLP decoder): every item's audit fields, field by field.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from '@bufbuild/cel';
import { describe, expect, it } from 'vitest';
import { compileFast } from '../../../src/ingest/recognition/fast-expressions.js';
import { decodeExport } from '../../../src/ingest/otlp/decode.js';
import { logItems, spanItems } from '../../../src/ingest/otlp/model.js';
import { loadOtlpTypes } from '../../../src/ingest/otlp/proto-types.js';
import { BUILTIN_PROFILES, compileProfile, logView, messageView, recognize, spanView, type RecordView } from '../../../src/ingest/recognition/index.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures');
const RECEIVED = Date.parse('2030-01-01T00:00:00.000Z');
const types = loadOtlpTypes();
const compiled = BUILTIN_PROFILES.map((p) => compileProfile(p));

interface ExpectedItem {
  index: number;
  type: 'tool_call' | 'log' | null;
  [field: string]: unknown;
}

function views(fixture: string): RecordView[] {
  const bytes = readFileSync(path.join(FIXTURES, fixture));
  const traces = JSON.parse(bytes.toString('utf8')).resourceSpans !== undefined;
  const body = decodeExport(traces ? types.traceRequest : types.logsRequest, bytes, 'json', traces ? 'traces' : 'logs', 500_000);
  return traces ? spanItems(body).map((s) => spanView(s, RECEIVED)) : logItems(body).map((r) => logView(r, RECEIVED));
}

/** What the profiles make of one item, in the expected file's terms. */
function observed(view: RecordView) {
  const { recognized, failures } = recognize(view, compiled);
  expect(failures).toEqual([]);
  // Unclaimed log records are stored as log rows by the generic path; unclaimed spans are not tool calls.
  if (!recognized) return { type: view.kind === 'log' ? 'log' : null };
  if (!recognized.toolCall) return { type: 'log' };
  return {
    type: 'tool_call',
    toolName: recognized.toolName,
    action: recognized.action,
    actionWord: recognized.actionWord,
    serverId: recognized.serverId,
    sessionId: recognized.sessionId,
    latencyMs: recognized.latencyMs,
    timestamp: recognized.occurredAt.toISOString(),
    traceId: recognized.traceId,
    toolCallId: recognized.toolCallId,
  };
}

describe.each(BUILTIN_PROFILES.map((p) => [p.id, p.fixture!] as const))('built-in profile %s', (id, fixture) => {
  it(`reads ${fixture} as its expected file says, one tool call per tool call`, () => {
    const expected = JSON.parse(readFileSync(path.join(FIXTURES, fixture.replace('.otlp.json', '.expected.json')), 'utf8')) as { items: ExpectedItem[] };
    const items = views(fixture);
    expect(items).toHaveLength(expected.items.length);
    for (const want of expected.items) {
      const got = observed(items[want.index]);
      const { index: _index, note: _note, ...fields } = want;
      expect({ index: want.index, ...got }).toEqual({ index: want.index, ...fields });
    }
    // No record is claimed by another emitter's profile.
    const claimed = items.map((v) => recognize(v, compiled).recognized?.profileId).filter(Boolean);
    expect(new Set(claimed)).toEqual(new Set([id]));
  });
});

describe('the fast path gives what @bufbuild/cel gives', () => {
  const celOnly = BUILTIN_PROFILES.map((p) => compileProfile(p, undefined, undefined, { evaluator: 'cel' }));
  const fixtures = BUILTIN_PROFILES.map((p) => p.fixture!);

  it.each(fixtures)('every built-in profile on every record of %s', (fixture) => {
    for (const view of views(fixture)) {
      const fast = recognize({ ...view }, compiled);
      const cel = recognize({ ...view }, celOnly);
      expect({ recognized: fast.recognized, failures: fast.failures.map((f) => f.expression) }).toEqual({ recognized: cel.recognized, failures: cel.failures.map((f) => f.expression) });
    }
  });

  it('expressions of every handled shape, on records with strings, numbers, booleans, nulls, maps and absent keys', () => {
    const expressions = [
      "attributes.s", "attributes['s']", "attributes.n", "attributes.b", "attributes.z", "attributes.m", "attributes.missing",
      "'s' in attributes ? attributes.s : null", "'missing' in attributes ? attributes.missing : 'none'",
      "attributes.s == 'x'", "attributes.s != 'x'", "attributes.n == 'x'", "attributes.b == true", "attributes.z == null", "attributes.missing == 'x'",
      "'a=' + attributes.s", "'a=' + attributes.n", "'a=' + string(attributes.b)", "string(attributes.s)", "string(attributes.n)",
      "attributes.b && attributes.missing == 'x'", "attributes.missing == 'x' && false", "attributes.missing == 'x' || true", "attributes.s || true", "!attributes.b", "!attributes.s",
      "attributes.b ? 'yes' : 'no'", "attributes.s ? 'yes' : 'no'", "attributes.s in ['x', 'y']", "attributes.n in ['x']", "name in ['ev', 'other']",
      "span.durationMs", "span.status", "'status=' + span.status", "log.traceId != '' ? log.traceId : null", "span.nope", "source == 'raw' && kind == 'message'",
      "attributes.s.startsWith('x')", "attributes.z in ['q', 'r']", "attributes.z == 'q'", "attributes.z != 'q'", "body in ['a']", "null == attributes.s", "attributes.s.contains('')", "attributes.n.endsWith('5')", "attributes.missing.contains('x')", "body == null",
      "'s' in attributes && 'x' in jsonParse(attributes.s) ? 'a' : 'b'", "'missing' in attributes && 'x' in jsonParse(attributes.missing) ? 'a' : 'b'",
      "attributes.b || size(attributes.s) > 0", "false ? attributes.s.substring(1) : attributes.s",
    ];
    const records = [
      { s: 'x', n: 5, b: true, z: null, m: { k: 'v' } },
      { s: 'y', n: 1.5, b: false, z: 'q', m: [1, 2] },
      {},
    ];
    for (const text of expressions) {
      // Every one is a shape the fast path compiles (it may still hand a record to CEL).
      expect({ text, fast: compileFast(parse(text).expr) !== null }).toEqual({ text, fast: true });
      const fast = compileProfile({ id: 'f', version: 1, description: '', source: '', when: 'true', fields: { tool: text } });
      const cel = compileProfile({ id: 'f', version: 1, description: '', source: '', when: 'true', fields: { tool: text } }, undefined, undefined, { evaluator: 'cel' });
      for (const fields of records) {
        const view = messageView({ source: 'raw', message: null, fields, receivedMs: 0 });
        view.name = 'ev';
        const a = fast.fields.tool!({ ...view });
        const b = cel.fields.tool!({ ...view });
        expect({ text, fields, ok: a.ok, value: a.ok ? a.value : null }).toEqual({ text, fields, ok: b.ok, value: b.ok ? b.value : null });
      }
    }
  });
});
