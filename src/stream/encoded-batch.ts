// A run of stream events encoded once as SSE bytes, with an index (seq, type, server per frame) so every filter's frames
// and every tail of the run are byte slices of the same bytes, never encoded again; it counts the bytes it holds.
import { STREAM_EVENT_TYPES, type StreamEvent, type StreamEventType } from '../audit/audit-types.js';
import { frameText } from './sse-format.js';

/** The frames a connection writes for (part of) a run of events, and how many events they hold. */
export interface SelectedFrames {
  buffer: Buffer;
  count: number;
}

/** Says whether a connection's filter lets an event of this type and server through. */
export type FrameFilter = (type: StreamEventType, serverId: string | null) => boolean;

/**
 * What the index and bookkeeping cost beyond the frames, counted in `size` (estimates of the heap they take): per run
 * (the object, its typed arrays and map), per event (seq 8, frame end 4, type 1, server 4, rounded up) and per
 * filter selection kept (the map entry and its object, plus its key's length).
 */
export const RUN_OVERHEAD_BYTES = 640;
export const EVENT_INDEX_BYTES = 24;
export const SELECTION_OVERHEAD_BYTES = 128;

const EMPTY = Buffer.alloc(0);
const TYPE_INDEX = new Map<string, number>(STREAM_EVENT_TYPES.map((t, i) => [t, i]));

export class EncodedBatch {
  /** Every event's frame, in seq order. */
  readonly buffer: Buffer;
  readonly count: number;
  private readonly seqs: Float64Array;
  /** Byte offset where each frame ends. */
  private readonly ends: Uint32Array;
  private readonly types: Uint8Array;
  /** Per event: 0 for no server, else 1 + its index in `serverIds` (each distinct id kept once). */
  private readonly servers: Uint32Array;
  private readonly serverIds: string[] = [];
  private readonly selections = new Map<string, SelectedFrames>();
  private bytes: number;
  /** Told how many bytes a new selection added (the recent window counts them against its bound). */
  onGrow: ((bytes: number) => void) | null = null;

  constructor(events: readonly StreamEvent[]) {
    const n = events.length;
    this.count = n;
    this.seqs = new Float64Array(n);
    this.ends = new Uint32Array(n);
    this.types = new Uint8Array(n);
    this.servers = new Uint32Array(n);
    const frames = new Array<string>(n);
    const serverIndex = new Map<string, number>();
    let total = 0;
    let serverBytes = 0;
    for (let i = 0; i < n; i++) {
      const e = events[i];
      frames[i] = frameText(e);
      total += Buffer.byteLength(frames[i]);
      this.ends[i] = total;
      this.seqs[i] = e.seq;
      this.types[i] = TYPE_INDEX.get(e.type) ?? 0;
      if (e.serverId !== null) {
        let s = serverIndex.get(e.serverId);
        if (s === undefined) {
          s = this.serverIds.push(e.serverId);
          serverIndex.set(e.serverId, s);
          serverBytes += e.serverId.length * 2;
        }
        this.servers[i] = s;
      }
    }
    // Its own memory, not a slice of a shared pool, so that what the window holds is what it counts.
    this.buffer = n ? Buffer.allocUnsafeSlow(total) : EMPTY;
    let at = 0;
    for (const f of frames) at += this.buffer.write(f, at);
    this.bytes = total + RUN_OVERHEAD_BYTES + n * EVENT_INDEX_BYTES + serverBytes;
  }

  /** Bytes held: frames, index and the selections kept. */
  get size(): number {
    return this.bytes;
  }

  /** The frames of the events `filter` lets through; `filterKey` names the filter, so the result is kept and shared. */
  select(filterKey: string, filter: FrameFilter): SelectedFrames {
    let sel = this.selections.get(filterKey);
    if (!sel) {
      sel = this.pick(0, filter);
      this.selections.set(filterKey, sel);
      const added = (sel.buffer === this.buffer ? 0 : sel.buffer.length) + filterKey.length * 2 + SELECTION_OVERHEAD_BYTES;
      this.bytes += added;
      this.onGrow?.(added);
    }
    return sel;
  }

  /**
   * The frames of the events after `seq` (all of them when it is before the run) that `filter` lets through (null: no
   * filter). The whole run's selection is shared; a tail is a slice of the bytes, built for the caller alone.
   */
  after(seq: number, filterKey: string, filter: FrameFilter | null): SelectedFrames {
    let k = 0;
    while (k < this.count && this.seqs[k] <= seq) k++;
    if (k === 0) return filter ? this.select(filterKey, filter) : { buffer: this.buffer, count: this.count };
    if (!filter) return { buffer: this.buffer.subarray(this.ends[k - 1]), count: this.count - k };
    return this.pick(k, filter);
  }

  /** The frames from event `from` on that `filter` lets through: runs of consecutive matches are copied as one slice. */
  private pick(from: number, filter: FrameFilter): SelectedFrames {
    const parts: Buffer[] = [];
    let total = 0;
    let count = 0;
    let runStart = -1;
    const startOf = (i: number) => (i === 0 ? 0 : this.ends[i - 1]);
    for (let i = from; i <= this.count; i++) {
      const ok = i < this.count && filter(STREAM_EVENT_TYPES[this.types[i]], this.servers[i] ? this.serverIds[this.servers[i] - 1] : null);
      if (ok) {
        count++;
        if (runStart < 0) runStart = i;
      } else if (runStart >= 0) {
        const part = this.buffer.subarray(startOf(runStart), this.ends[i - 1]);
        parts.push(part);
        total += part.length;
        runStart = -1;
      }
    }
    if (count === 0) return { buffer: EMPTY, count: 0 };
    return { buffer: parts.length === 1 && from === 0 && count === this.count ? this.buffer : concatOwn(parts, total), count };
  }
}

/** Buffer.concat into memory of its own (not a slice of Node's shared pool, which a kept selection would pin). */
function concatOwn(parts: Buffer[], total: number): Buffer {
  const out = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const p of parts) at += p.copy(out, at);
  return out;
}
