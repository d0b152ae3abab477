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

/** The SSE frame of an event: `id:` its seq, `event:` its type, `data:` its payload as one line of JSON. */
export function frameText(e: StreamEvent): string {
  return `id: ${e.seq}\nevent: ${e.type}\ndata: ${sseJson(e.payload)}\n\n`;
}

/** The event with its frame, built once and kept on the event (for events written one by one, as in a replay). */
export function frameOf(e: StreamEvent): FramedEvent {
  const f = e as FramedEvent;
  if (f.frame === undefined) f.frame = frameText(e);
  return f;
}

/** The frame of a signed checkpoint: `event: checkpoint`, no id (a client's resume position stays its last event's seq). */
export function checkpointFrame(c: { size: number; rootHash: string; note: string }): string {
  return `event: checkpoint\ndata: ${sseJson({ size: c.size, rootHash: c.rootHash, note: c.note })}\n\n`;
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
