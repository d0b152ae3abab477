// Helpers of the anomaly tests: settings, bursts of tool calls, and a marker spike that proves earlier evaluations are done.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { bearer, http, postEvents, toolCall, type Json, type RunningApp } from '../helpers/app.js';
import type { SseClient, SseEvent } from '../helpers/sse.js';

/** Small, fast settings: threshold 60 calls/min = more than 10 calls within 10 s. */
export const FAST = { windowSeconds: 10, minRate: 60, multiplier: 3, cooldownSeconds: 300 };

export async function putSettings(url: string, key: string, patch: Record<string, unknown>): Promise<Json> {
  const r = await http(`${url}/api/v1/anomaly-settings`, { method: 'PUT', headers: bearer(key), json: patch });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r;
}

/** Posts n tool calls of one (server, tool) in one request, so they are counted together. */
export async function burst(url: string, key: string, n: number, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await postEvents(url, key, Array.from({ length: n }, (_, i) => toolCall(i, extra)));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body.accepted).toBe(n);
}

export function anomalies(client: SseClient, match: { serverId?: string; toolName?: string } = {}): SseEvent[] {
  return client.events.filter(
    (e) => e.event === 'anomaly' && (match.serverId === undefined || e.json.serverId === match.serverId) && (match.toolName === undefined || e.json.toolName === match.toolName),
  );
}

/**
 * Each instance evaluates committed calls in commit order and emits their alerts in that order. A spike of a fresh
 * marker tool, posted to every instance after the traffic under test, therefore alerts only after everything posted
 * before it was evaluated: once every marker's anomaly is on the stream, the anomaly count of the test is final.
 */
export async function settle(apps: RunningApp[], key: string, client: SseClient, calls = 30): Promise<void> {
  const tools = apps.map(() => `marker-${randomBytes(4).toString('hex')}`);
  for (let i = 0; i < apps.length; i++) await burst(apps[i].url, key, calls, { serverId: 'marker-srv', toolName: tools[i] });
  await client.waitFor((c) => tools.every((t) => anomalies(c, { toolName: t }).length > 0), 20_000, `marker anomalies ${tools.join(', ')}`);
}

/** Stored anomalies of an org for one tool, oldest first. */
export async function storedAnomalies(url: string, key: string, toolName: string): Promise<{ metadata: Record<string, unknown>; serverId: string; toolName: string }[]> {
  const r = await http(`${url}/api/v1/audit-events?type=anomaly&toolName=${encodeURIComponent(toolName)}&order=asc`, { headers: bearer(key) });
  expect(r.status).toBe(200);
  return r.body.items;
}
