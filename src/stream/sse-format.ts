// Server-sent event wire format: frames, comments and the stream's response headers.
import type { StreamEvent } from '../audit/audit-types.js';

/** An event with its SSE frame, serialized once and shared by every connection that receives it. */
export interface FramedEvent extends StreamEvent {
  frame: string;
}

/**
 * Characters JSON.stringify leaves raw that some clients treat as line ends (U+0085 NEL, U+2028, U+2029); escaped, so a
 * `data:` line stays one line for every client and an event's text can never forge another field.
 */
const LINE_BREAKS_JSON_KEEPS = /[\u0085\u2028\u2029]/g;

function sseJson(value: unknown): string {
  const json = JSON.stringify(value);
  return json.replace(LINE_BREAKS_JSON_KEEPS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function frameOf(e: StreamEvent): FramedEvent {
  const f = e as FramedEvent;
  if (f.frame === undefined) f.frame = `id: ${e.seq}\nevent: ${e.type}\ndata: ${sseJson(e.payload)}\n\n`;
  return f;
}

/** The frames a connection writes for a run of events, and how many events they hold. */
export interface SelectedFrames {
  buffer: Buffer;
  count: number;
}

/**
 * The frames of a run of events as Buffers, encoded once however many connections write them: all of them, and the
 * selection of each distinct filter (connections with the same filter write the same bytes, never a copy of their own).
 */
export class EncodedFrames {
  private bytes: Buffer | null = null;
  private selections = new Map<string, SelectedFrames>();

  constructor(readonly events: readonly StreamEvent[]) {}

  get buffer(): Buffer {
    if (this.bytes === null) this.bytes = Buffer.from(this.events.map((e) => frameOf(e).frame).join(''));
    return this.bytes;
  }

  /** The frames of the events `matches` lets through; `filterKey` names the filter, so the result is shared. */
  select(filterKey: string, matches: (e: StreamEvent) => boolean): SelectedFrames {
    let sel = this.selections.get(filterKey);
    if (!sel) {
      const chosen = this.events.filter(matches);
      sel = { buffer: chosen.length ? Buffer.from(chosen.map((e) => frameOf(e).frame).join('')) : Buffer.alloc(0), count: chosen.length };
      this.selections.set(filterKey, sel);
    }
    return sel;
  }
}

export function comment(text: string): string {
  return `: ${text.replace(/[\r\n\u0085\u2028\u2029]+/g, ' ')}\n\n`;
}

export function retryLine(ms: number): string {
  return `retry: ${ms}\n\n`;
}

export const SSE_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  'X-Accel-Buffering': 'no',
  Connection: 'keep-alive',
} as const;
