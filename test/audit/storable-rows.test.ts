// Events checked on their row's JSON (rows made ahead) end up exactly as the walk of storable makes them: same events,
// same rows, the same errors; a clean event is kept as it is. Pure: no database.
import { describe, expect, it } from 'vitest';
import { prepareEvents } from '../../src/audit/grouped-store.js';
import { eventRow } from '../../src/audit/append-rows.js';
import { isStorable, MAX_STORED_DEPTH, TooDeep } from '../../src/shared/input-safety.js';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';

let n = 0;
const call = (over: Partial<NewAuditEvent> = {}): NewAuditEvent => ({
  type: 'tool_call',
  source: 'cloudwatch',
  occurredAt: new Date(1_700_000_000_000),
  serverId: 'mcp-github',
  sessionId: 'sess_1',
  toolName: 'create_issue',
  action: 'allow',
  latencyMs: 12,
  metadata: { level: 'INFO', fields: { a: 1, b: ['x'] } },
  dedupeKey: `raw:${n++}`,
  ...over,
});

/** An object nesting `depth` levels of {d: …}. */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < depth; i++) v = { d: v };
  return v;
}

/** Both ways of preparing the same input, with their rows (the walked one's made from its events, as under the lock). */
function bothWays(input: NewAuditEvent[]) {
  const checked = prepareEvents(input, true);
  const walked = prepareEvents(input, false);
  return {
    checked: checked.fresh.map((e) => ({ e, row: checked.rows.get(e) })),
    walked: walked.fresh.map((e) => ({ e, row: eventRow(e) })),
  };
}

describe('rows checked for storability on their JSON', () => {
  it('keeps a clean event as it is, its row made once', () => {
    const e = call();
    const { checked, walked } = bothWays([e]);
    expect(checked[0].e).toBe(e);
    expect(checked).toEqual(walked);
  });

  const cases: [string, () => NewAuditEvent][] = [
    ['a NUL in a metadata value', () => call({ metadata: { message: 'a\u0000b' } })],
    ['a NUL in a metadata key', () => call({ metadata: { ['k\u0000']: 1 } })],
    ['an unpaired surrogate in the server id', () => call({ serverId: 'srv\uD800' })],
    ['an unpaired low surrogate in a nested array', () => call({ metadata: { fields: { list: ['ok', '\uDC00x'] } } })],
    ['an unpaired surrogate in the shared metadata only', () => {
      const shared = { source_detail: '/aws/lambda/\uD83D', cloudwatch: { logGroup: 'g' } };
      return call({ metadata: { ...shared, own: 1 }, sharedMetadata: shared });
    }],
    ['another control character (escaped as \\u0001 but storable)', () => call({ metadata: { message: '\u0001\u001b[31mred' } })],
    ['a paired surrogate (an emoji) and a backslash-u in text', () => call({ toolName: 'rocket 🚀', metadata: { path: 'C:\\users\\u0000' } })],
    ['a NUL in a session_update payload', () => ({ ...call(), type: 'session_update', payload: { type: 'session_update', sessionId: 's\u0000', status: 'suspended', timestamp: '2026-01-01T00:00:00.000Z' } })],
    ['metadata nesting exactly as deep as allowed', () => call({ metadata: nested(MAX_STORED_DEPTH - 1) })],
    ['a dedupe key with a NUL', () => call({ dedupeKey: 'raw:\u0000' })],
  ];
  it.each(cases)('stores %s as the walk does', (_name, make) => {
    const { checked, walked } = bothWays([make()]);
    expect(checked).toEqual(walked);
    for (const { row } of checked) expect(isStorable(JSON.parse(`{${row!.text}`))).toBe(true);
  });

  it('replaces what cannot be stored, in the event and in its row', () => {
    const { checked } = bothWays([call({ serverId: 'srv\uD800', metadata: { m: 'a\u0000' } })]);
    expect(checked[0].e.serverId).toBe('srv\uFFFD');
    expect(JSON.parse(`{${checked[0].row!.text}`)).toMatchObject({ server_id: 'srv\uFFFD', metadata: { m: 'a\uFFFD' } });
  });

  it('refuses metadata one level deeper than allowed, as the walk does, and far deeper ones too', () => {
    for (const depth of [MAX_STORED_DEPTH, 20_000]) {
      const input = [call({ metadata: nested(depth) })];
      expect(() => prepareEvents(input, false)).toThrow(TooDeep);
      expect(() => prepareEvents(input, true)).toThrow(TooDeep);
    }
  });

  it('walks a batch\'s shared metadata once, and still catches an unstorable one shared by later events', () => {
    const shared = { payloadFormat: 'spec', cloudwatch: { logGroup: 'g' } };
    const bad = { payloadFormat: 'spec', cloudwatch: { logGroup: 'g\u0000' } };
    const input = [call({ metadata: { ...shared }, sharedMetadata: shared }), call({ metadata: { ...shared }, sharedMetadata: shared }), call({ metadata: { ...bad }, sharedMetadata: bad })];
    const { checked, walked } = bothWays(input);
    expect(checked).toEqual(walked);
    expect(checked[0].e).toBe(input[0]);
    expect(checked[2].e.sharedMetadata).toEqual({ payloadFormat: 'spec', cloudwatch: { logGroup: 'g\uFFFD' } });
  });
});
