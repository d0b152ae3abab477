// Sessions on one instance, both backends: listing and paging, reading, suspend/resume with their events, 409/404, concurrency, flags, auth.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, login, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';

describe.each(backendNames)('sessions on one instance (%s)', (backendName) => {
  const { app } = suiteApp(backendName);
  let org: TestOrg;

  const sessionsUrl = (path = '') => `${app.url}/api/v1/sessions${path}`;
  const transition = (key: string, id: string, op: 'suspend' | 'resume', json?: unknown) =>
    http(sessionsUrl(`/${encodeURIComponent(id)}/${op}`), { method: 'POST', headers: bearer(key), ...(json === undefined ? {} : { json }) });

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  it('lists the sessions tool calls created, with first/last seen and counts, filtered by status and serverId, in keyset pages', async () => {
    const o = await createOrg(app.url);
    const at = (s: number) => new Date(Date.UTC(2024, 4, 1, 10, 0, s)).toISOString();
    const r = await postEvents(app.url, o.key, [
      toolCall(1, { sessionId: 'l-1', serverId: 'srv-a', timestamp: at(1) }),
      toolCall(2, { sessionId: 'l-1', serverId: 'srv-a', timestamp: at(5) }),
      toolCall(3, { sessionId: 'l-1', serverId: 'srv-a', timestamp: at(3) }),
      toolCall(4, { sessionId: 'l-2', serverId: 'srv-b', timestamp: at(2) }),
      toolCall(5, { sessionId: 'l-3', serverId: 'srv-a', timestamp: at(4) }),
      toolCall(6, { sessionId: 'l-4', serverId: 'srv-b', timestamp: at(6) }),
      toolCall(7, { sessionId: 'l-5', serverId: 'srv-c', timestamp: at(0) }),
    ]);
    expect(r.status).toBe(200);

    const all = await http(sessionsUrl(), { headers: bearer(o.key) });
    expect(all.status).toBe(200);
    expect(all.body.nextCursor).toBeNull();
    expect(all.body.items.map((s: { sessionId: string }) => s.sessionId)).toEqual(['l-4', 'l-1', 'l-3', 'l-2', 'l-5']);
    const l1 = all.body.items[1];
    expect(l1).toEqual({
      sessionId: 'l-1',
      serverId: 'srv-a',
      status: 'active',
      statusReason: null,
      statusChangedBy: null,
      firstSeenAt: expect.any(String),
      lastSeenAt: at(5),
      statusChangedAt: expect.any(String),
      toolCallCount: 3,
    });
    // A later call moves lastSeenAt and the count, not firstSeenAt.
    await postEvents(app.url, o.key, [toolCall(8, { sessionId: 'l-1', serverId: 'srv-a', timestamp: at(9) })]);
    const one = await http(sessionsUrl('/l-1'), { headers: bearer(o.key) });
    expect(one.body).toMatchObject({ sessionId: 'l-1', firstSeenAt: l1.firstSeenAt, lastSeenAt: at(9), toolCallCount: 4 });
    expect(Date.parse(l1.firstSeenAt)).toBeLessThanOrEqual(Date.parse(l1.lastSeenAt));

    expect((await transition(o.key, 'l-3', 'suspend')).status).toBe(200);
    const suspended = await http(sessionsUrl('?status=suspended'), { headers: bearer(o.key) });
    expect(suspended.body.items.map((s: { sessionId: string }) => s.sessionId)).toEqual(['l-3']);
    const active = await http(sessionsUrl('?status=active'), { headers: bearer(o.key) });
    expect(active.body.items.map((s: { sessionId: string }) => s.sessionId)).toEqual(['l-1', 'l-4', 'l-2', 'l-5']);
    const srvA = await http(sessionsUrl('?serverId=srv-a'), { headers: bearer(o.key) });
    expect(srvA.body.items.map((s: { sessionId: string }) => s.sessionId)).toEqual(['l-1', 'l-3']);
    const both = await http(sessionsUrl('?serverId=srv-a&status=active'), { headers: bearer(o.key) });
    expect(both.body.items.map((s: { sessionId: string }) => s.sessionId)).toEqual(['l-1']);

    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: { sessionId: string }[]; nextCursor: string | null } } = await http(
        sessionsUrl(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
        { headers: bearer(o.key) },
      );
      expect(page.status).toBe(200);
      pages.push(page.body.items.map((s) => s.sessionId));
      cursor = page.body.nextCursor;
    } while (cursor && pages.length < 10);
    expect(pages).toEqual([['l-1', 'l-4'], ['l-3', 'l-2'], ['l-5']]);
  });

  it('rejects bad list queries with 400 and the offending parameter', async () => {
    for (const q of ['status=gone', 'limit=0', 'limit=501', 'cursor=not-a-cursor', `serverId=${'x'.repeat(201)}`]) {
      const r = await http(sessionsUrl(`?${q}`), { headers: bearer(org.key) });
      expect(r.status, q).toBe(400);
      expect(r.body).toMatchObject({ statusCode: 400, code: 'invalid_query' });
      expect(r.body.issues[0].path).toBe(q.split('=')[0]);
    }
  });

  it('reads one session, and answers 404 for an unknown one or another org’s', async () => {
    await postEvents(app.url, org.key, [toolCall(1, { sessionId: 'read-1', serverId: 'srv-r' })]);
    const r = await http(sessionsUrl('/read-1'), { headers: bearer(org.key) });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ sessionId: 'read-1', serverId: 'srv-r', status: 'active', toolCallCount: 1 });
    const unknown = await http(sessionsUrl('/nope'), { headers: bearer(org.key) });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ statusCode: 404, code: 'not_found' });
    // Longer than any session id: never a session (Fastify answers 414 past its path-parameter limit).
    expect([404, 414]).toContain((await http(sessionsUrl(`/${'x'.repeat(300)}`), { headers: bearer(org.key) })).status);
    const other = await createOrg(app.url);
    expect((await http(sessionsUrl('/read-1'), { headers: bearer(other.key) })).status).toBe(404);
    expect((await transition(other.key, 'read-1', 'suspend')).status).toBe(404);
  });

  it('streams created, suspended and resumed session_updates in order, each stored with who did it and why', async () => {
    const client = await openSse(`${app.url}/api/v1/events?types=session_update`, bearer(org.key));
    expect(client.status).toBe(200);
    await postEvents(app.url, org.key, [toolCall(1, { sessionId: 'life-1', serverId: 'srv-l' })]);
    await client.waitForCount(1);

    const s = await transition(org.key, 'life-1', 'suspend', { reason: 'looks compromised' });
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ sessionId: 'life-1', serverId: 'srv-l', status: 'suspended', statusReason: 'looks compromised', statusChangedBy: expect.stringContaining('api_key:') });
    await client.waitForCount(2);
    const r = await transition(org.key, 'life-1', 'resume');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'active', statusReason: null });
    await client.waitForCount(3);

    expect(client.events.map((e) => [e.event, e.json.sessionId, e.json.status])).toEqual([
      ['session_update', 'life-1', 'active'],
      ['session_update', 'life-1', 'suspended'],
      ['session_update', 'life-1', 'active'],
    ]);
    for (const e of client.events) expect(Object.keys(e.json).sort()).toEqual(['sessionId', 'status', 'timestamp', 'type']);
    expect(client.events[1].json.timestamp).toBe(s.body.statusChangedAt);
    expect(client.events[2].json.timestamp).toBe(r.body.statusChangedAt);
    client.close();

    const stored = await http(`${app.url}/api/v1/audit-events?type=session_update&sessionId=life-1&order=asc`, { headers: bearer(org.key) });
    expect(stored.body.items.map((e: { source: string; metadata: unknown }) => [e.source, e.metadata])).toEqual([
      ['system', { transition: 'created', by: 'system' }],
      ['operator', { transition: 'suspended', by: s.body.statusChangedBy, reason: 'looks compromised' }],
      ['operator', { transition: 'resumed', by: s.body.statusChangedBy, reason: null }],
    ]);
  });

  it('answers 409 with the current status when a transition does not apply, and 404 for an unknown session', async () => {
    await postEvents(app.url, org.key, [toolCall(1, { sessionId: 'c-1' })]);
    const resumeActive = await transition(org.key, 'c-1', 'resume');
    expect(resumeActive.status).toBe(409);
    expect(resumeActive.body).toMatchObject({ statusCode: 409, code: 'conflict', status: 'active' });
    expect((await transition(org.key, 'c-1', 'suspend')).status).toBe(200);
    const again = await transition(org.key, 'c-1', 'suspend');
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ statusCode: 409, code: 'conflict', status: 'suspended' });
    expect((await transition(org.key, 'unknown-session', 'suspend')).status).toBe(404);
    expect((await transition(org.key, 'unknown-session', 'resume')).status).toBe(404);
    // A refused transition stores nothing.
    const stored = await http(`${app.url}/api/v1/audit-events?type=session_update&sessionId=c-1`, { headers: bearer(org.key) });
    expect(stored.body.items).toHaveLength(2);
  });

  it('lets exactly one of two concurrent suspends win, with one session_update', async () => {
    await postEvents(app.url, org.key, [toolCall(1, { sessionId: 'race-1' })]);
    const client = await openSse(`${app.url}/api/v1/events?types=session_update`, bearer(org.key));
    const results = await Promise.all([transition(org.key, 'race-1', 'suspend', { reason: 'a' }), transition(org.key, 'race-1', 'suspend', { reason: 'b' })]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(results.find((r) => r.status === 409)!.body.status).toBe('suspended');
    // The resume is a later marker: once it is seen, every update of the race has been delivered.
    expect((await transition(org.key, 'race-1', 'resume')).status).toBe(200);
    await client.waitFor((c) => c.events.some((e) => e.json.sessionId === 'race-1' && e.json.status === 'active'), 15_000, 'resume');
    expect(client.events.filter((e) => e.json.sessionId === 'race-1').map((e) => e.json.status)).toEqual(['suspended', 'active']);
    client.close();
  });

  it('still stores and streams tool calls of a suspended session, flagged in metadata', async () => {
    await postEvents(app.url, org.key, [toolCall(1, { sessionId: 'flag-1', id: 'before-suspend' })]);
    expect((await transition(org.key, 'flag-1', 'suspend')).status).toBe(200);
    const client = await openSse(`${app.url}/api/v1/events?types=tool_call`, bearer(org.key));
    const r = await postEvents(app.url, org.key, [toolCall(2, { sessionId: 'flag-1', id: 'after-suspend' })]);
    expect(r.body).toEqual({ accepted: 1, duplicates: 0 });
    await client.waitFor((c) => c.events.some((e) => e.json.sessionId === 'flag-1'), 15_000, 'tool call of the suspended session');
    client.close();
    const stored = await http(`${app.url}/api/v1/audit-events?type=tool_call&sessionId=flag-1&order=asc`, { headers: bearer(org.key) });
    expect(stored.body.items.map((e: { metadata: Record<string, unknown> }) => [e.metadata.id, e.metadata.sessionSuspended ?? false])).toEqual([
      ['before-suspend', false],
      ['after-suspend', true],
    ]);
    const session = await http(sessionsUrl('/flag-1'), { headers: bearer(org.key) });
    expect(session.body).toMatchObject({ status: 'suspended', toolCallCount: 2 });
  });

  it('validates transition bodies: reason up to 500 characters, no unknown fields; an empty body is fine', async () => {
    await postEvents(app.url, org.key, [toolCall(1, { sessionId: 'v-1' })]);
    const long = await transition(org.key, 'v-1', 'suspend', { reason: 'x'.repeat(501) });
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ code: 'invalid_body', issues: [{ path: 'reason' }] });
    expect((await transition(org.key, 'v-1', 'suspend', { reason: 'ok', extra: 1 })).status).toBe(400);
    expect((await transition(org.key, 'v-1', 'suspend', { reason: 42 })).status).toBe(400);
    const badJson = await http(sessionsUrl('/v-1/suspend'), { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'application/json' }, body: '{"reason":' });
    expect(badJson.status).toBe(400);
    // Empty JSON body, then no body at all.
    const empty = await http(sessionsUrl('/v-1/suspend'), { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'application/json' }, body: '' });
    expect(empty.status).toBe(200);
    expect(empty.body.statusReason).toBeNull();
    expect((await transition(org.key, 'v-1', 'resume')).status).toBe(200);
    expect((await transition(org.key, 'v-1', 'suspend', { reason: 'x'.repeat(500) })).status).toBe(200);
  });

  it('needs events:read to read and sessions:write to change with a key; any member may change with a cookie and an allowed Origin', async () => {
    const ingestOnly = await createOrg(app.url, { scopes: ['ingest:write'] });
    await postEvents(app.url, ingestOnly.key, [toolCall(1, { sessionId: 'p-1' })]);
    expect((await http(sessionsUrl(), { headers: bearer(ingestOnly.key) })).status).toBe(403);
    expect((await http(sessionsUrl('/p-1'), { headers: bearer(ingestOnly.key) })).status).toBe(403);
    const denied = await transition(ingestOnly.key, 'p-1', 'suspend');
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('missing_scope');
    expect((await http(sessionsUrl())).status).toBe(401);

    const member = await createOrg(app.url, { role: 'member' });
    await postEvents(app.url, member.key, [toolCall(1, { sessionId: 'p-2' })]);
    const cookie = await login(app.url, member.email, member.password);
    expect((await http(sessionsUrl('/p-2'), { headers: { cookie } })).status).toBe(200);
    const noOrigin = await http(sessionsUrl('/p-2/suspend'), { method: 'POST', headers: { cookie }, json: {} });
    expect(noOrigin.status).toBe(403);
    const ok = await http(sessionsUrl('/p-2/suspend'), { method: 'POST', headers: { cookie, origin: app.url }, json: { reason: 'by hand' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'suspended', statusReason: 'by hand', statusChangedBy: `user:${member.email}` });
  });
});
