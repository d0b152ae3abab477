// Per-instance counters of what one party has in flight through the proxy (calls per key and session, requests and
// streams per key, streams in all): taken before the work starts, given back exactly once when it ends.
export interface ProxyLimits {
  callsPerKey: number;
  callsPerSession: number;
  requestsPerKey: number;
  streamsPerKey: number;
  streamsTotal: number;
}

export type Slot = () => void;

function counter() {
  const counts = new Map<string, number>();
  return {
    take(key: string, max: number): boolean {
      const n = counts.get(key) ?? 0;
      if (n >= max) return false;
      counts.set(key, n + 1);
      return true;
    },
    give(key: string): void {
      const n = (counts.get(key) ?? 1) - 1;
      if (n <= 0) counts.delete(key);
      else counts.set(key, n);
    },
    get: (key: string) => counts.get(key) ?? 0,
  };
}

/** A release that works once, however often it is called. */
function once(release: () => void): Slot {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    release();
  };
}

export function createProxyLimiter(limits: ProxyLimits) {
  const calls = counter();
  const requests = counter();
  const streams = counter();
  const ALL = '*';

  return {
    /** A request of any kind by a key; null when the key has PROXY_MAX_REQUESTS_PER_KEY in flight. */
    request(keyId: string): Slot | null {
      return requests.take(keyId, limits.requestsPerKey) ? once(() => requests.give(keyId)) : null;
    },
    /** A tools/call of a key and session; null (and nothing taken) with the reason when either is at its bound. */
    call(keyId: string, orgId: string, sessionId: string): Slot | string {
      const sessionKey = `${orgId}\u0000${sessionId}`;
      if (!calls.take(`k:${keyId}`, limits.callsPerKey)) return `this API key has ${limits.callsPerKey} tool calls in flight (PROXY_MAX_CALLS_PER_KEY)`;
      if (!calls.take(`s:${sessionKey}`, limits.callsPerSession)) {
        calls.give(`k:${keyId}`);
        return `this session has ${limits.callsPerSession} tool calls in flight (PROXY_MAX_CALLS_PER_SESSION)`;
      }
      return once(() => {
        calls.give(`k:${keyId}`);
        calls.give(`s:${sessionKey}`);
      });
    },
    /** A long-lived stream (GET stream, subscriptions/listen) of a key. */
    stream(keyId: string): Slot | string {
      if (!streams.take(ALL, limits.streamsTotal)) return `the proxy has ${limits.streamsTotal} streams open (PROXY_MAX_STREAMS_TOTAL)`;
      if (!streams.take(keyId, limits.streamsPerKey)) {
        streams.give(ALL);
        return `this API key has ${limits.streamsPerKey} streams open (PROXY_MAX_STREAMS_PER_KEY)`;
      }
      return once(() => {
        streams.give(ALL);
        streams.give(keyId);
      });
    },
    /** Streams open now on this instance. */
    openStreams: () => streams.get(ALL),
  };
}

export type ProxyLimiter = ReturnType<typeof createProxyLimiter>;
