// RateCounter in process, for the embedded single-instance mode: the same buckets, minutes, sessions and gate as in Redis.
import { baselineMinutes, GATE_RETENTION_MS, MAX_TRACKED_SESSIONS, minuteOf, retentionMs, windowBuckets, type RateCounter, type RecordInput } from './rate-counter.js';

interface KeyState {
  buckets: Map<number, number>;
  minutes: Map<number, number>;
  /** session id -> last arrival ms, oldest first */
  sessions: Map<string, number>;
  expiresAtMs: number;
}

function bump(map: Map<number, number>, k: number, n: number): void {
  map.set(k, (map.get(k) ?? 0) + n);
}

/** `maxKeys`: keys tracked at most (ANOMALY_MAX_KEYS); the least recently used are dropped beyond it, so memory stays bounded. */
export function createMemoryRateCounter(maxKeys: number): RateCounter {
  const keys = new Map<string, KeyState>();
  /** gate key -> {last alert ms, kept until} */
  const gates = new Map<string, { lastMs: number; expiresAtMs: number }>();
  let lastSweepMs = 0;

  function sweep(nowMs: number): void {
    if (nowMs - lastSweepMs < 60_000) return;
    lastSweepMs = nowMs;
    for (const [k, s] of keys) if (s.expiresAtMs <= nowMs) keys.delete(k);
    for (const [k, g] of gates) if (g.expiresAtMs <= nowMs) gates.delete(k);
  }

  function stateOf(key: string, nowMs: number): KeyState {
    let s = keys.get(key);
    if (s && s.expiresAtMs <= nowMs) s = undefined;
    if (s) keys.delete(key); // re-inserted below: the map's order is least recently used first
    else s = { buckets: new Map(), minutes: new Map(), sessions: new Map(), expiresAtMs: 0 };
    keys.set(key, s);
    while (keys.size > maxKeys) keys.delete(keys.keys().next().value as string);
    return s;
  }

  return {
    kind: 'memory',
    async record(key: string, input: RecordInput) {
      sweep(input.nowMs);
      const s = stateOf(key, input.nowMs);
      const { current, first } = windowBuckets(input.nowMs, input.windowSeconds);
      bump(s.buckets, current, input.count);
      bump(s.minutes, minuteOf(input.nowMs), input.count);
      let windowCount = 0;
      for (const [b, n] of s.buckets) {
        if (b >= first) windowCount += n;
        else s.buckets.delete(b);
      }
      const firstMinute = baselineMinutes(input.nowMs, input.windowSeconds).first;
      for (const m of s.minutes.keys()) if (m < firstMinute) s.minutes.delete(m);
      for (const id of input.sessions.slice(0, MAX_TRACKED_SESSIONS)) {
        s.sessions.delete(id);
        s.sessions.set(id, input.nowMs);
      }
      const oldest = input.nowMs - input.windowSeconds * 1000;
      for (const [id, at] of s.sessions) if (at <= oldest || s.sessions.size > MAX_TRACKED_SESSIONS) s.sessions.delete(id);
      s.expiresAtMs = input.nowMs + retentionMs(input.windowSeconds);
      return { windowCount, minuteCounts: new Map(s.minutes) };
    },
    async recentSessions(key: string, nowMs: number, windowSeconds: number) {
      const s = keys.get(key);
      if (!s) return [];
      const oldest = nowMs - windowSeconds * 1000;
      return [...s.sessions].filter(([, at]) => at > oldest).map(([id]) => id).reverse().slice(0, MAX_TRACKED_SESSIONS);
    },
    async tryOpenAlertGate(key: string, nowMs: number, cooldownMs: number) {
      const g = gates.get(key);
      if (g && g.expiresAtMs > nowMs && nowMs - g.lastMs < cooldownMs) return false;
      gates.set(key, { lastMs: nowMs, expiresAtMs: nowMs + Math.max(cooldownMs, GATE_RETENTION_MS) });
      return true;
    },
    async close() {
      keys.clear();
      gates.clear();
    },
  };
}
