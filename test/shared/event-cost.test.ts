// boundEvent: what an event may cost, measured on the JSON it is stored as; cuts are marked, deterministic, largest first.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { boundEvent, capText, jsonStringBytes, MAX_COLUMN_CHARS, MIN_EVENT_BYTES, TRUNCATED } from '../../src/shared/event-cost.js';
import { storable } from '../../src/shared/input-safety.js';

const MAX = MIN_EVENT_BYTES;

function event(metadata: Record<string, unknown>, extra: Partial<NewAuditEvent> = {}): NewAuditEvent {
  return { type: 'log', source: 'cloudwatch', occurredAt: new Date('2024-05-01T10:00:00.000Z'), serverId: null, sessionId: null, toolName: null, action: null, latencyMs: null, metadata, dedupeKey: 'cw:1', ...extra };
}

/** The bytes of the event as stored: its fields and metadata as JSON (UTF-8), after the write path's text clean-up. */
function storedBytes(e: NewAuditEvent): number {
  const s = storable(e);
  const { sharedMetadata: _shared, ...fields } = s;
  return Buffer.byteLength(JSON.stringify(fields));
}

describe('boundEvent', () => {
  it('leaves an event within the bound untouched (the same object)', () => {
    const e = event({ message: 'tool=search action=allow', fields: { a: 1, b: [true, null, 'x'] } });
    expect(boundEvent(e, { maxEventBytes: MAX })).toBe(e);
  });

  it('cuts one huge value to what fits, with the marker, and keeps the small values whole', () => {
    const e = event({ source_detail: 'group', traceId: 'abc', message: 'x'.repeat(4 * 1024 * 1024), level: 'INFO' });
    const b = boundEvent(e, { maxEventBytes: MAX });
    expect(storedBytes(b)).toBeLessThanOrEqual(MAX);
    expect(b.metadata).toMatchObject({ source_detail: 'group', traceId: 'abc', level: 'INFO' });
    const message = b.metadata!.message as string;
    expect(message.endsWith(TRUNCATED)).toBe(true);
    // Nearly all the room left goes to the one large value.
    expect(message.length).toBeGreaterThan(MAX - 1024);
    expect(e.metadata!.message).toHaveLength(4 * 1024 * 1024);
  });

  it('shares the room: values larger than an equal share are cut to it, smaller ones stay whole', () => {
    const e = event({ a: 'a'.repeat(100_000), b: 'b'.repeat(30_000), small: 'c'.repeat(1_000) });
    const b = boundEvent(e, { maxEventBytes: 20_000 + MAX });
    expect(storedBytes(b)).toBeLessThanOrEqual(20_000 + MAX);
    const m = b.metadata as Record<string, string>;
    expect(m.small).toBe('c'.repeat(1_000));
    expect(m.a.endsWith(TRUNCATED) && m.b.endsWith(TRUNCATED)).toBe(true);
    expect(Math.abs(jsonStringBytes(m.a) - jsonStringBytes(m.b))).toBeLessThanOrEqual(1);
  });

  it('an object of many small entries keeps its first ones and counts the rest under the marker; arrays end with it', () => {
    const many = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i]));
    const e = event({ attributes: many, list: Array.from({ length: 50_000 }, (_, i) => i) });
    const b = boundEvent(e, { maxEventBytes: MAX });
    expect(storedBytes(b)).toBeLessThanOrEqual(MAX);
    const attrs = b.metadata!.attributes as Record<string, number>;
    expect(attrs.k0).toBe(0);
    expect(Object.keys(attrs).length - 1 + attrs[TRUNCATED]).toBe(50_000);
    const list = b.metadata!.list as unknown[];
    expect(list[0]).toBe(0);
    expect(list.at(-1)).toBe(TRUNCATED);
  });

  it('measures UTF-8 and JSON escapes, not characters: multi-byte and escaped text is cut to the same byte bound', () => {
    for (const unit of ['é', '💥', '\n', '\u0001', '"', '\ud800']) {
      const b = boundEvent(event({ message: unit.repeat(200_000) }), { maxEventBytes: MAX });
      expect(storedBytes(b), JSON.stringify(unit)).toBeLessThanOrEqual(MAX);
      expect(storedBytes(b), JSON.stringify(unit)).toBeGreaterThan(MAX - 1024);
    }
  });

  it('cuts inside nested values, and a key too long to keep is counted, not copied', () => {
    const e = event({ fields: { request: { body: 'x'.repeat(100_000), id: 7 } }, ['k'.repeat(100_000)]: 1 });
    const b = boundEvent(e, { maxEventBytes: MAX });
    expect(storedBytes(b)).toBeLessThanOrEqual(MAX);
    const request = (b.metadata!.fields as { request: { body: string; id: number } }).request;
    expect(request.id).toBe(7);
    expect(request.body.endsWith(TRUNCATED)).toBe(true);
    expect(b.metadata![TRUNCATED]).toBe(1);
  });

  it('cuts text columns to 200 characters with the marker, also in an event otherwise within the bound', () => {
    const small = boundEvent(event({}, { sessionId: 'x'.repeat(201) }), { maxEventBytes: MAX });
    expect(small.sessionId).toBe(capText('x'.repeat(201), MAX_COLUMN_CHARS));
    const b = boundEvent(event({}, { serverId: 's'.repeat(100_000), toolName: 't'.repeat(300) }), { maxEventBytes: MAX });
    expect(b.serverId).toHaveLength(MAX_COLUMN_CHARS);
    expect(b.serverId!.endsWith(TRUNCATED)).toBe(true);
    expect(b.toolName).toBe(capText('t'.repeat(300), MAX_COLUMN_CHARS));
  });

  it('any metadata, any bound: within the bound, deterministic, and the input never changed', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 30 }), fc.jsonValue({ maxDepth: 6 })), fc.integer({ min: MAX, max: 3 * MAX }), fc.string({ maxLength: 40_000 }), (metadata, max, big) => {
        const input = event({ ...metadata, big, again: big });
        const before = JSON.stringify(input);
        const a = boundEvent(input, { maxEventBytes: max });
        expect(storedBytes(a)).toBeLessThanOrEqual(max);
        expect(JSON.stringify(boundEvent(input, { maxEventBytes: max }))).toBe(JSON.stringify(a));
        expect(JSON.stringify(input)).toBe(before);
      }),
      { numRuns: 200 },
    );
  });
});
