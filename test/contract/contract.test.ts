// The contract (src/contract) matches what a real server sends: stream payloads and the API rows the dashboard reads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  apiKeyListSchema,
  apiKeyMeSchema,
  auditEventPageSchema,
  auditStatsSchema,
  createdApiKeySchema,
  sessionPageSchema,
  sessionRowSchema,
  userMeSchema,
} from '../../src/contract/api-rows.js';
import { anomalyPayloadSchema, sessionUpdatePayloadSchema, streamPayloadSchema, toolCallPayloadSchema } from '../../src/contract/stream-payloads.js';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, login, postEvents, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { burst, FAST, putSettings } from '../anomaly/anomaly-helpers.js';

/** The value parses, and parsing keeps every field: nothing is sent that the contract does not name. */
function expectExactly(schema: z.ZodType, value: unknown, what: string): void {
  const r = schema.safeParse(value);
  expect(r.success ? null : r.error.issues, what).toBeNull();
  expect(r.data, what).toEqual(value);
}

describe.each(backendNames)('the contract against a real server (%s)', (backendName) => {
  const { app } = suiteApp(backendName);
  let org: TestOrg;
  let client: SseClient;

  beforeAll(async () => {
    org = await createOrg(app.url);
    await putSettings(app.url, org.key, { ...FAST, suspendSessionsOnSpike: true });
    client = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    expect(client.status).toBe(200);
    // A tool call without its optional fields, a burst that is a spike (an anomaly, and its session suspended), a resume.
    await postEvents(app.url, org.key, [{ serverId: 'srv-min', toolName: 'bare' }]);
    await burst(app.url, org.key, 12, { toolName: 'search', sessionId: 'c-1' });
    await client.waitFor((c) => c.events.some((e) => e.event === 'session_update' && e.json.status === 'suspended'), 20_000, 'suspension');
    const resumed = await http(`${app.url}/api/v1/sessions/c-1/resume`, { method: 'POST', headers: bearer(org.key), json: { reason: 'checked' } });
    expect(resumed.status).toBe(200);
    expectExactly(sessionRowSchema, resumed.body, 'POST /sessions/:id/resume');
    // c-1's updates: created (active), suspended, resumed (active).
    const updates = (c: SseClient) => c.events.filter((e) => e.event === 'session_update' && e.json.sessionId === 'c-1').map((e) => e.json.status);
    await client.waitFor((c) => updates(c).length === 3, 20_000, 'resume');
    expect(updates(client)).toEqual(['active', 'suspended', 'active']);
  });
  afterAll(async () => {
    client?.close();
  });

  it('every streamed payload is exactly its contract schema, for each of the three types', async () => {
    const byType = { tool_call: toolCallPayloadSchema, anomaly: anomalyPayloadSchema, session_update: sessionUpdatePayloadSchema } as const;
    const seen = new Set<string>();
    for (const e of client.events) {
      expect(Object.keys(byType)).toContain(e.event);
      expectExactly(byType[e.event as keyof typeof byType], e.json, `${e.event} ${e.data}`);
      expectExactly(streamPayloadSchema, e.json, `${e.event} as the union`);
      expect(e.json.type).toBe(e.event);
      seen.add(e.event);
    }
    expect([...seen].sort()).toEqual(['anomaly', 'session_update', 'tool_call']);
    expect(client.events.find((e) => e.json.toolName === 'bare')?.json).toMatchObject({ sessionId: null, action: null, latencyMs: null });
  });

  it('replayed payloads are the same contract', async () => {
    const replay = await openSse(`${app.url}/api/v1/events?lastEventId=0`, bearer(org.key));
    await replay.waitForCount(client.events.length);
    expect(replay.events.map((e) => e.json)).toEqual(client.events.map((e) => e.json));
    replay.close();
  });

  it('the API rows the dashboard reads are exactly their contract schemas', async () => {
    const get = async (path: string, headers: Record<string, string> = bearer(org.key)) => {
      const r = await http(`${app.url}${path}`, { headers });
      expect(r.status, path).toBe(200);
      return r.body;
    };
    const events = await get('/api/v1/audit-events?limit=1000');
    expect(new Set(events.items.map((e: { type: string }) => e.type))).toEqual(new Set(['tool_call', 'anomaly', 'session_update']));
    expectExactly(auditEventPageSchema, events, 'audit events');
    expectExactly(sessionPageSchema, await get('/api/v1/sessions'), 'sessions');
    expectExactly(sessionRowSchema, await get('/api/v1/sessions/c-1'), 'one session');
    const stats = await get('/api/v1/audit-events/stats?window=1h');
    expect(stats.anomalies).toHaveLength(1);
    expectExactly(auditStatsSchema, stats, 'stats');
    expectExactly(apiKeyMeSchema, await get('/api/v1/auth/me'), 'me (API key)');
    const cookie = await login(app.url, org.email, org.password);
    const asUser = { cookie, origin: app.url };
    expectExactly(userMeSchema, await get('/api/v1/auth/me', asUser), 'me (login)');
    const created = await http(`${app.url}/api/v1/api-keys`, { method: 'POST', headers: asUser, json: { name: 'contract', scopes: ['events:read'] } });
    expect(created.status).toBe(201);
    expectExactly(createdApiKeySchema, created.body, 'created key');
    expectExactly(apiKeyListSchema, await get('/api/v1/api-keys', asUser), 'keys');
  });
});
