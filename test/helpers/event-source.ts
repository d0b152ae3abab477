// A real EventSource client (the `eventsource` package: reconnects after the retry delay with Last-Event-ID), whose
// reading can be paused to play a slow consumer; records every event of every connection and awaits conditions.
import { EventSource } from 'eventsource';

export interface EsEvent {
  id: number;
  type: string;
  data: string;
}

export interface EsClient {
  /** Every event received, across reconnects, in order of arrival. */
  events: EsEvent[];
  /** Connections opened (the first one and every reconnect). */
  opens: number;
  /** Stops reading the response (the server's writes back up) until `resume`. */
  pause(): void;
  resume(): void;
  /** Resolves when predicate holds; rejects after timeoutMs. */
  waitFor(predicate: (c: EsClient) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): void;
}

export async function openEventSource(url: string, headers: Record<string, string>): Promise<EsClient> {
  let paused = false;
  let unpause: (() => void) | null = null;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  const es = new EventSource(url, {
    fetch: async (input, init) => {
      const res = await fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });
      if (!res.body) return res;
      const source = res.body.getReader();
      // Pulls from the socket only when the EventSource reads and the client is not paused.
      const body = new ReadableStream<Uint8Array>(
        {
          async pull(ctrl) {
            while (paused) await new Promise<void>((r) => (unpause = r));
            const { value, done } = await source.read();
            if (done) ctrl.close();
            else ctrl.enqueue(value);
          },
          cancel: (reason) => source.cancel(reason),
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { status: res.status, headers: res.headers });
    },
  });
  const client: EsClient = {
    events: [],
    opens: 0,
    pause: () => {
      paused = true;
    },
    resume: () => {
      paused = false;
      unpause?.();
      unpause = null;
    },
    waitFor(predicate, timeoutMs = 30_000, what = 'condition') {
      if (predicate(client)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(client)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what} (got ${client.events.length} events over ${client.opens} connections)`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close: () => {
      client.resume();
      es.close();
    },
  };
  const onEvent = (type: string) => (m: MessageEvent) => {
    client.events.push({ id: Number(m.lastEventId), type, data: m.data as string });
    notify();
  };
  for (const type of ['tool_call', 'anomaly', 'session_update']) es.addEventListener(type, onEvent(type));
  es.addEventListener('open', () => {
    client.opens++;
    notify();
  });
  await client.waitFor((c) => c.opens > 0, 15_000, 'the stream to open');
  return client;
}

/** True when the ids are consecutive (each the one after the previous): nothing lost, nothing twice, in order. */
export function consecutive(ids: number[]): boolean {
  for (let i = 1; i < ids.length; i++) if (ids[i] !== ids[i - 1] + 1) return false;
  return true;
}
