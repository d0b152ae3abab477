// Server-sent event wire format: frames, comments and the stream's response headers.
import type { StreamEvent } from '../audit/audit-types.js';

/** An event with its SSE frame, serialized once and shared by every connection that receives it. */
export interface FramedEvent extends StreamEvent {
  frame: string;
}

export function frameOf(e: StreamEvent): FramedEvent {
  const f = e as FramedEvent;
  if (f.frame === undefined) f.frame = `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e.payload)}\n\n`;
  return f;
}

/** The frames of a run of events as one Buffer, encoded once however many connections write it. */
export class EncodedFrames {
  private bytes: Buffer | null = null;

  constructor(readonly events: readonly StreamEvent[]) {}

  get buffer(): Buffer {
    if (this.bytes === null) this.bytes = Buffer.from(this.events.map((e) => frameOf(e).frame).join(''));
    return this.bytes;
  }
}

export function comment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
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
