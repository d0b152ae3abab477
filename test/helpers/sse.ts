// A real SSE client over fetch: parses frames, records events and comments, and awaits conditions instead of sleeping.
import { createSseParser } from './sse-frames.js';

export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface SseClient {
  status: number;
  headers: Headers;
  events: SseEvent[];
  comments: string[];
  retry: number | null;
  ended: Promise<void>;
  isEnded(): boolean;
  /** Resolves when predicate holds over the received events; rejects after timeoutMs. */
  waitFor(predicate: (c: SseClient) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  waitForCount(n: number, timeoutMs?: number): Promise<void>;
  lastEventId(): string | null;
  close(): void;
  /** Stops reading from the socket (the server's writes back up) without closing it. */
  pause(): void;
  /** Reads again after `pause`. */
  resume(): void;
  body?: string;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const ctrl = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ctrl.signal });
  const client: SseClient = {
    status: res.status,
    headers: res.headers,
    events: [],
    comments: [],
    retry: null,
    ended: Promise.resolve(),
    isEnded: () => ended,
    waitFor,
    waitForCount: (n, t) => waitFor((c) => c.events.length >= n, t, `${n} events`),
    lastEventId: () => {
      for (let i = client.events.length - 1; i >= 0; i--) if (client.events[i].id !== null) return client.events[i].id;
      return null;
    },
    close: () => {
      ctrl.abort();
      if (paused) {
        ended = true;
        notify();
      }
    },
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
      unpause?.();
      unpause = null;
    },
  };
  let ended = false;
  let paused = false;
  let unpause: (() => void) | null = null;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  if (res.status !== 200 || !res.headers.get('content-type')?.includes('text/event-stream')) {
    client.body = await res.text();
    ended = true;
    return client;
  }
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const parse = createSseParser();
  client.ended = (async () => {
    try {
      for (;;) {
        // While paused nothing is read: TCP buffers fill, the server sees backpressure.
        while (paused) await new Promise<void>((r) => (unpause = r));
        const { value, done } = await reader.read();
        if (done) break;
        for (const frame of parse(decoder.decode(value, { stream: true }))) {
          client.comments.push(...frame.comments);
          if (frame.retry !== null) client.retry = frame.retry;
          if (frame.data === null) continue;
          let json: unknown = null;
          try {
            json = JSON.parse(frame.data);
          } catch {
            /* keep text */
          }
          client.events.push({ id: frame.id, event: frame.event, data: frame.data, json });
        }
        notify();
      }
    } catch {
      /* aborted or reset */
    } finally {
      ended = true;
      notify();
    }
  })();

  function waitFor(predicate: (c: SseClient) => boolean, timeoutMs = 15_000, what = 'condition'): Promise<void> {
    if (predicate(client)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const check = () => {
        if (predicate(client)) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        } else if (ended) {
          clearTimeout(timer);
          waiters.delete(check);
          reject(new Error(`stream ended before ${what} (got ${client.events.length} events)`));
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${what} (got ${client.events.length} events)`));
      }, timeoutMs);
      waiters.add(check);
    });
  }
  return client;
}

/** Seqs of the received events, as numbers. */
export function seqs(c: SseClient): number[] {
  return c.events.map((e) => Number(e.id));
}

/** Asserts helper: strictly increasing with no duplicates. */
export function strictlyIncreasing(xs: number[]): boolean {
  for (let i = 1; i < xs.length; i++) if (xs[i] <= xs[i - 1]) return false;
  return true;
}
