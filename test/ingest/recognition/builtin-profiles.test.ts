// Each built-in profile against its fixture (the emitter's own records, decoded by the OTLP decoder): every item's audit fields, field by field.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeExport } from '../../../src/ingest/otlp/decode.js';
import { logItems, spanItems } from '../../../src/ingest/otlp/model.js';
import { loadOtlpTypes } from '../../../src/ingest/otlp/proto-types.js';
import { BUILTIN_PROFILES, compileProfile, logView, recognize, spanView, type RecordView } from '../../../src/ingest/recognition/index.js';

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
