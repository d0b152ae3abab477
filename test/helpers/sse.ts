// A real SSE client over fetch: parses frames, records events and comments, and awaits conditions instead of sleeping.
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
  };
  let ended = false;
  let paused = false;
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
  let buf = '';
  client.ended = (async () => {
    try {
      for (;;) {
        if (paused) return new Promise<void>(() => undefined); // never read again: TCP buffers fill, the server sees backpressure
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let idx;
        while ((idx = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, idx);
          buf = buf.slice(idx + 2);
          let id: string | null = null;
          let event = 'message';
          const data: string[] = [];
          let isEvent = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) client.comments.push(line.slice(1).trim());
            else if (line.startsWith('retry:')) client.retry = Number(line.slice(6).trim());
            else if (line.startsWith('id:')) {
              id = line.slice(3).trim();
              isEvent = true;
            } else if (line.startsWith('event:')) {
              event = line.slice(6).trim();
              isEvent = true;
            } else if (line.startsWith('data:')) {
              data.push(line.slice(5).replace(/^ /, ''));
              isEvent = true;
            }
          }
          if (isEvent && data.length) {
            const text = data.join('\n');
            let json: unknown = null;
            try {
              json = JSON.parse(text);
            } catch {
              /* keep text */
            }
            client.events.push({ id, event, data: text, json });
          }
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
