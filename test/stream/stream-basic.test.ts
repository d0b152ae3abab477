// The stream on one instance, both backends: format, headers, replay by Last-Event-ID, filters, heartbeat and auth.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, login, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse, seqs, strictlyIncreasing } from '../helpers/sse.js';

describe.each(backendNames)('stream on one instance (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { SSE_HEARTBEAT_MS: '200', ANOMALY_MIN_RATE: '1000000000' });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  it('sends retry first, then each event with id = seq, event = type and the spec fields as one-line JSON', async () => {
    const client = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    expect(client.status).toBe(200);
    expect(client.headers.get('content-type')).toContain('text/event-stream');
    expect(client.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(client.headers.get('x-accel-buffering')).toBe('no');
    expect(client.headers.get('content-encoding')).toBeNull();
    const ts = '2024-05-01T10:00:00.123Z';
    const r = await postEvents(app.url, org.key, { serverId: 'srv-a', sessionId: 'sess-a', toolName: 'search', action: 'allow', latencyMs: 42, timestamp: ts });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ accepted: 1, duplicates: 0 });
    await client.waitForCount(2);
    expect(client.retry).toBe(2000);
    const [created, call] = client.events;
    expect(created.event).toBe('session_update');
    expect(created.json).toMatchObject({ type: 'session_update', sessionId: 'sess-a', status: 'active' });
    expect(call.event).toBe('tool_call');
    expect(call.json).toEqual({ type: 'tool_call', serverId: 'srv-a', sessionId: 'sess-a', toolName: 'search', action: 'allow', latencyMs: 42, timestamp: ts });
    expect(Number(call.id)).toBe(Number(created.id) + 1);
    client.close();
  });

  it('uses null for fields the sender did not give', async () => {
    const client = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    await postEvents(app.url, org.key, { serverId: 'srv-n', toolName: 'fetch' });
    await client.waitForCount(1);
    expect(client.events[0].json).toMatchObject({ sessionId: null, action: null, latencyMs: null });
    client.close();
  });

  it('replays exactly the missed events after Last-Event-ID, then continues live, without gap or duplicate', async () => {
    const first = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    await postEvents(app.url, org.key, [toolCall(1), toolCall(2)]);
    await first.waitForCount(2);
    const last = first.lastEventId()!;
    first.close();
    const missed = Array.from({ length: 1000 }, (_, i) => toolCall(i));
    expect((await postEvents(app.url, org.key, missed)).body.accepted).toBe(1000);
    const resumed = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': last });
    await resumed.waitForCount(1000);
    await postEvents(app.url, org.key, [toolCall(2000)]);
    await resumed.waitForCount(1001);
    const s = seqs(resumed);
    expect(s[0]).toBe(Number(last) + 1);
    expect(strictlyIncreasing(s)).toBe(true);
    expect(s[s.length - 1] - s[0]).toBe(1000);
    resumed.close();
  });

  it('accepts lastEventId as a query parameter and rejects a malformed one with 400', async () => {
    const c = await openSse(`${app.url}/api/v1/events?lastEventId=0&types=session_update`, bearer(org.key));
    await c.waitForCount(1);
    expect(c.events[0].id).toBe('1');
    c.close();
    const bad = await openSse(`${app.url}/api/v1/events?lastEventId=abc`, bearer(org.key));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body!)).toMatchObject({ statusCode: 400, code: 'invalid_query' });
  });

  it('filters by types and serverId', async () => {
    const onlyB = await openSse(`${app.url}/api/v1/events?serverId=srv-b&types=tool_call`, bearer(org.key));
    await postEvents(app.url, org.key, [toolCall(1, { serverId: 'srv-x', sessionId: 'f1' }), toolCall(2, { serverId: 'srv-b', sessionId: 'f2' })]);
    await onlyB.waitForCount(1);
    await postEvents(app.url, org.key, [toolCall(3, { serverId: 'srv-b' })]);
    await onlyB.waitForCount(2);
    expect(onlyB.events.every((e) => e.event === 'tool_call' && e.json.serverId === 'srv-b')).toBe(true);
    onlyB.close();
    const bad = await openSse(`${app.url}/api/v1/events?types=nope`, bearer(org.key));
    expect(bad.status).toBe(400);
  });

  it('sends heartbeat comments on an idle stream', async () => {
    const c = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    await c.waitFor((x) => x.comments.filter((t) => t === 'heartbeat').length >= 2, 10_000, 'two heartbeats');
    c.close();
  });

  it('answers 401 JSON without credentials and 403 without events:read', async () => {
    const none = await openSse(`${app.url}/api/v1/events`);
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body!)).toMatchObject({ statusCode: 401, code: 'unauthorized' });
    const ingestOnly = await createOrg(app.url, { scopes: ['ingest:write'] });
    const denied = await openSse(`${app.url}/api/v1/events`, bearer(ingestOnly.key));
    expect(denied.status).toBe(403);
    expect(JSON.parse(denied.body!)).toMatchObject({ statusCode: 403, code: 'missing_scope' });
  });

  it('works with a login cookie', async () => {
    const cookie = await login(app.url, org.email, org.password);
    const c = await openSse(`${app.url}/api/v1/events`, { cookie });
    expect(c.status).toBe(200);
    await postEvents(app.url, org.key, [toolCall(7, { serverId: 'cookie-srv' })]);
    await c.waitFor((x) => x.events.some((e) => e.json?.serverId === 'cookie-srv'), 10_000, 'cookie event');
    c.close();
  });

  it('closes the stream of a revoked key', async () => {
    const other = await createOrg(app.url);
    const c = await openSse(`${app.url}/api/v1/events`, bearer(other.key));
    expect(c.status).toBe(200);
    const del = await http(`${app.url}/api/v1/admin/api-keys/${other.keyId}`, { method: 'DELETE', headers: bearer('test-admin-token-0123456789') });
    expect(del.status).toBe(204);
    await c.ended;
    expect(c.comments.some((t) => t.includes('revoked'))).toBe(true);
    const again = await openSse(`${app.url}/api/v1/events`, bearer(other.key));
    expect(again.status).toBe(401);
  });
});
