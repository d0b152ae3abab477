// The recent window and its encoded batches on their own: what a resume gets for every id and filter is exactly the
// frames after it, the window covers only a contiguous range it has seen whole, and it never holds more than its bytes.
import { describe, expect, it } from 'vitest';
import type { StreamEvent } from '../../src/audit/audit-types.js';
import { EncodedBatch, type FrameFilter } from '../../src/stream/encoded-batch.js';
import { RecentWindow } from '../../src/stream/recent-window.js';
import { frameText } from '../../src/stream/sse-format.js';

const ev = (seq: number, over: Partial<StreamEvent> = {}): StreamEvent => ({
  seq,
  type: 'tool_call',
  serverId: seq % 2 ? 'a' : 'b',
  payload: { type: 'tool_call', serverId: seq % 2 ? 'a' : 'b', sessionId: null, toolName: `t${seq} é ✓`, action: null, latencyMs: seq, timestamp: '2026-01-01T00:00:00.000Z' },
  ...over,
});
const frames = (events: StreamEvent[]) => events.map(frameText).join('');
const onlyA: FrameFilter = (_type, serverId) => serverId === 'a';

/** Everything a resume after `seq` gets from the window, step by step as the feed takes it: text and last seq covered. */
function drain(w: RecentWindow, seq: number, end: number, key = '', filter: FrameFilter | null = null): { text: string; through: number } | null {
  let text = '';
  let at = seq;
  while (at < end) {
    const step = w.next(at, key, filter);
    if (!step) return null;
    text += step.frames.buffer.toString('utf8');
    at = step.through;
  }
  return { text, through: at };
}

describe('EncodedBatch', () => {
  const events = [ev(3), ev(4), ev(6, { type: 'anomaly', serverId: null }), ev(7), ev(8)];
  const batch = new EncodedBatch(events);

  it('holds every frame once; a tail after any seq is exactly the frames after it (multi-byte text included)', () => {
    expect(batch.buffer.toString('utf8')).toBe(frames(events));
    for (const after of [0, 3, 4, 5, 6, 7, 8, 9]) {
      const tail = batch.after(after, '', null);
      expect(tail.buffer.toString('utf8')).toBe(frames(events.filter((e) => e.seq > after)));
      expect(tail.count).toBe(events.filter((e) => e.seq > after).length);
    }
  });

  it('gives each filter exactly its events, whole or from any seq, and keeps the whole selection to share', () => {
    for (const [key, filter, keep] of [
      ['a', onlyA, (e: StreamEvent) => e.serverId === 'a'],
      ['anomaly', ((type) => type === 'anomaly') as FrameFilter, (e: StreamEvent) => e.type === 'anomaly'],
      ['none', (() => false) as FrameFilter, () => false],
    ] as const) {
      for (const after of [0, 3, 5, 7, 8]) {
        const got = batch.after(after, key, filter);
        expect(got.buffer.toString('utf8')).toBe(frames(events.filter((e) => e.seq > after && keep(e))));
        expect(got.count).toBe(events.filter((e) => e.seq > after && keep(e)).length);
      }
      expect(batch.select(key, filter)).toBe(batch.select(key, filter));
    }
  });

  it('counts what it holds: the frames, an index per event, and each selection kept with its key', () => {
    const b = new EncodedBatch(events);
    const base = b.size;
    expect(base).toBeGreaterThanOrEqual(b.buffer.length + events.length * 24);
    let grown = 0;
    b.onGrow = (n) => (grown += n);
    const sel = b.select('a', onlyA);
    expect(grown).toBe(sel.buffer.length + 'a'.length * 2 + 128);
    expect(b.size).toBe(base + grown);
    b.select('a', onlyA);
    expect(b.size).toBe(base + grown); // kept: counted once
  });
});

describe('RecentWindow', () => {
  const batchOf = (from: number, to: number) => new EncodedBatch(Array.from({ length: to - from + 1 }, (_, i) => ev(from + i)));
  const all = (from: number, to: number) => frames(Array.from({ length: to - from + 1 }, (_, i) => ev(from + i)));

  it('serves every id of its range with exactly the frames after it, for any filter, and no id outside it', () => {
    let bytes = 0;
    const w = new RecentWindow(1 << 20, (d) => (bytes += d));
    w.reset(10);
    w.append(batchOf(11, 15), 10, 15);
    w.append(null, 15, 17); // seqs 16..17 stream nothing (e.g. log events)
    w.append(batchOf(18, 20), 17, 20);
    const streamed = [11, 12, 13, 14, 15, 18, 19, 20].map((seq) => ev(seq));
    for (let id = 10; id <= 20; id++) {
      expect(w.covers(id)).toBe(true);
      const got = drain(w, id, 20)!;
      expect(got.text, `after ${id}`).toBe(frames(streamed.filter((e) => e.seq > id)));
      expect(got.through).toBe(20);
      expect(drain(w, id, 20, 'a', onlyA)!.text).toBe(frames(streamed.filter((e) => e.seq > id && e.serverId === 'a')));
    }
    expect(w.covers(9)).toBe(false);
    expect(w.covers(21)).toBe(false);
    expect(w.next(9, '', null)).toBeNull();
    expect(bytes).toBe(w.size);
  });

  it('starts over rather than claim a range it has not seen whole', () => {
    const w = new RecentWindow(1 << 20, () => undefined);
    w.reset(0);
    w.append(batchOf(1, 5), 0, 5);
    w.append(batchOf(9, 10), 8, 10); // 6..8 never appended
    expect(w.covers(5)).toBe(false);
    expect(w.covers(8)).toBe(true);
    expect(drain(w, 8, 10)!.text).toBe(all(9, 10));
  });

  it('drops its oldest batches past its bytes (and a batch larger than all of them), then covers only what it still holds', () => {
    let bytes = 0;
    const one = batchOf(1, 10).size;
    const w = new RecentWindow(Math.floor(one * 2.5), (d) => (bytes += d));
    w.reset(0);
    for (let b = 0; b < 6; b++) {
      w.append(batchOf(b * 10 + 1, b * 10 + 10), b * 10, b * 10 + 10);
      expect(w.size).toBeLessThanOrEqual(Math.floor(one * 2.5));
      expect(bytes).toBe(w.size);
    }
    expect(w.covers(39)).toBe(false);
    expect(w.covers(40)).toBe(true);
    expect(drain(w, 40, 60)!.text).toBe(all(41, 60));
    // A selection kept on a held batch counts too: the window drops its oldest to stay within its bytes.
    drain(w, 40, 60, 'a', onlyA);
    expect(w.size).toBeLessThanOrEqual(Math.floor(one * 2.5));
    // One batch larger than the window: nothing held, only its end covered.
    w.append(batchOf(61, 100), 60, 100);
    expect(w.size).toBe(0);
    expect(bytes).toBe(0);
    expect(w.covers(99)).toBe(false);
    expect(w.covers(100)).toBe(true);
  });

  it('with no bytes holds nothing and covers only its end; a smaller limit drops at once', () => {
    const w = new RecentWindow(0, () => undefined);
    w.reset(0);
    w.append(batchOf(1, 5), 0, 5);
    expect(w.size).toBe(0);
    expect(w.covers(4)).toBe(false);
    expect(w.covers(5)).toBe(true);

    const v = new RecentWindow(1 << 20, () => undefined);
    v.reset(0);
    v.append(batchOf(1, 5), 0, 5);
    v.append(batchOf(6, 10), 5, 10);
    v.setLimit(batchOf(6, 10).size);
    expect(v.covers(4)).toBe(false);
    expect(drain(v, 5, 10)!.text).toBe(all(6, 10));
    v.setLimit(0);
    expect(v.size).toBe(0);
    expect(v.covers(5)).toBe(false);
    expect(v.covers(10)).toBe(true);
  });
});
