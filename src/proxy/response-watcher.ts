// Reads a tools/call response as it passes through (JSON or SSE, chunk by chunk, never holding it back) to learn the
// call's outcome: its result, a tool error, or a JSON-RPC error; each message read at most up to a bound.
import type { JsonRpcId } from './mcp-message.js';

export type ResponseOutcome = { kind: 'result' | 'tool_error'; resultBytes: number } | { kind: 'jsonrpc_error'; resultBytes: number; error: { code: number | null; message: string } };

export interface ResponseWatcher {
  push(chunk: Buffer): void;
  /** The outcome once the response message with the call's id was seen, else null. */
  readonly outcome: ResponseOutcome | null;
  /** Messages larger than the bound that passed through unread. */
  readonly unread: number;
}

/** The outcome a JSON-RPC message gives, when it is the response to `id`. */
function outcomeOf(text: string, id: JsonRpcId): ResponseOutcome | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  for (const m of Array.isArray(v) ? v : [v]) {
    if (!m || typeof m !== 'object' || (m as { id?: unknown }).id !== id) continue;
    const msg = m as { result?: { isError?: unknown }; error?: { code?: unknown; message?: unknown } };
    const resultBytes = Buffer.byteLength(text);
    if (msg.error && typeof msg.error === 'object') {
      return { kind: 'jsonrpc_error', resultBytes, error: { code: typeof msg.error.code === 'number' ? msg.error.code : null, message: String(msg.error.message ?? '').slice(0, 500) } };
    }
    if ('result' in msg) return { kind: msg.result && msg.result.isError === true ? 'tool_error' : 'result', resultBytes };
  }
  return null;
}

/** Watches an application/json body: collected up to `maxBytes`, read at the end (call `finish`). */
function jsonWatcher(id: JsonRpcId, maxBytes: number): ResponseWatcher & { finish(): void } {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  let outcome: ResponseOutcome | null = null;
  return {
    push(chunk) {
      size += chunk.length;
      if (size > maxBytes) {
        over = true;
        chunks.length = 0;
      } else if (!over) chunks.push(chunk);
    },
    finish() {
      if (!over && chunks.length) outcome = outcomeOf(Buffer.concat(chunks).toString('utf8'), id);
    },
    get outcome() {
      return outcome;
    },
    get unread() {
      return over ? 1 : 0;
    },
  };
}

/** Watches an SSE body: each event's data lines joined and read as it completes; an event over `maxBytes` is skipped. */
function sseWatcher(id: JsonRpcId, maxBytes: number): ResponseWatcher & { finish(): void } {
  let line = '';
  let data: string[] = [];
  let dataBytes = 0;
  let skipping = false;
  let unread = 0;
  let outcome: ResponseOutcome | null = null;
  // A CR ended the last chunk: an LF opening the next one belongs to it (CRLF split across chunks).
  let pendingCr = false;
  const decoder = new TextDecoder();

  function dispatch() {
    if (!skipping && data.length && !outcome) outcome = outcomeOf(data.join('\n'), id);
    if (skipping) unread++;
    data = [];
    dataBytes = 0;
    skipping = false;
  }

  function onLine(l: string) {
    if (l === '') return dispatch();
    if (skipping || !l.startsWith('data')) return;
    const value = l.startsWith('data: ') ? l.slice(6) : l.startsWith('data:') ? l.slice(5) : null;
    if (value === null) return;
    dataBytes += value.length;
    if (dataBytes > maxBytes) {
      skipping = true;
      data = [];
      return;
    }
    data.push(value);
  }

  return {
    push(chunk) {
      if (outcome) return;
      let text = decoder.decode(chunk, { stream: true });
      if (pendingCr && text.charCodeAt(0) === 10) text = text.slice(1);
      pendingCr = false;
      // The held part of a line has no line end: only the new text is scanned.
      const scanFrom = line.length;
      line += text;
      let start = 0;
      for (let i = scanFrom; i < line.length; i++) {
        const c = line.charCodeAt(i);
        if (c !== 10 && c !== 13) continue;
        onLine(line.slice(start, i));
        if (c === 13) {
          if (i + 1 === line.length) pendingCr = true;
          else if (line.charCodeAt(i + 1) === 10) i++;
        }
        start = i + 1;
      }
      line = line.slice(start);
      // A line without an end yet is held only up to the bound (then its event is skipped).
      if (line.length > maxBytes) {
        skipping = true;
        data = [];
        line = '';
      }
    },
    finish() {
      if (line) onLine(line);
      dispatch();
    },
    get outcome() {
      return outcome;
    },
    get unread() {
      return unread;
    },
  };
}

export function createResponseWatcher(contentType: string | undefined, id: JsonRpcId, maxBytes: number): ResponseWatcher & { finish(): void } {
  return (contentType ?? '').toLowerCase().startsWith('text/event-stream') ? sseWatcher(id, maxBytes) : jsonWatcher(id, maxBytes);
}
