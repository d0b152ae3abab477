// GET /api/v1/audit-events on both backends: filters, cursor paging, org isolation, dedupe and server registration.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

describe.each(backendNames)('audit events (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000' }, {}, { inject: true });
  let org: TestOrg;
  let other: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
    other = await createOrg(app.url);
    const r = await postEvents(app.url, org.key, [
      toolCall(1, { id: 'a1', serverId: 'srv-1', toolName: 'search', action: 'allow', sessionId: 's-1', timestamp: '2024-01-01T00:00:00.000Z' }),
      toolCall(2, { id: 'a2', serverId: 'srv-2', toolName: 'exec', action: 'deny', sessionId: 's-2', timestamp: '2024-01-02T00:00:00.000Z' }),
      toolCall(3, { id: 'a3', serverId: 'srv-1', toolName: 'exec', action: 'deny', sessionId: 's-1', timestamp: '2024-01-03T00:00:00.000Z' }),
    ]);
    expect(r.body).toEqual({ accepted: 3, duplicates: 0 });
    await postEvents(app.url, other.key, [toolCall(9, { id: 'a1', serverId: 'srv-1' })]);
  });

  const get = (q: string, key = org.key) => http(`${app.url}/api/v1/audit-events${q}`, { headers: bearer(key) });

  it('lists newest first with every stored field', async () => {
    const r = await get('?type=tool_call');
    expect(r.status).toBe(200);
    expect(r.body.items.map((e: { toolName: string }) => e.toolName)).toEqual(['exec', 'exec', 'search']);
    expect(r.body.items[2]).toMatchObject({ type: 'tool_call', source: 'raw', serverId: 'srv-1', sessionId: 's-1', action: 'allow', occurredAt: '2024-01-01T00:00:00.000Z', metadata: { id: 'a1' } });
    expect(r.body.items[2].seq).toBeLessThan(r.body.items[0].seq);
  });

  it('filters by type, server, session, tool, action, source and time', async () => {
    expect((await get('?serverId=srv-1&type=tool_call')).body.items).toHaveLength(2);
    expect((await get('?sessionId=s-2&type=tool_call')).body.items).toHaveLength(1);
    expect((await get('?toolName=exec&action=deny')).body.items).toHaveLength(2);
    expect((await get('?source=raw')).body.items).toHaveLength(3);
    expect((await get('?type=session_update')).body.items).toHaveLength(2);
    expect((await get('?type=tool_call&from=2024-01-02T00:00:00Z&to=2024-01-03T00:00:00Z')).body.items.map((e: { toolName: string }) => e.toolName)).toEqual(['exec']);
  });

  it('pages by cursor in both orders without overlap', async () => {
    const p1 = await get('?limit=2&order=asc');
    expect(p1.body.items).toHaveLength(2);
    expect(p1.body.nextCursor).toBe(String(p1.body.items[1].seq));
    const p2 = await get(`?limit=3&order=asc&cursor=${p1.body.nextCursor}`);
    const all = [...p1.body.items, ...p2.body.items].map((e: { seq: number }) => e.seq);
    expect(all).toEqual([1, 2, 3, 4, 5]);
    const d1 = await get('?limit=3');
    const d2 = await get(`?limit=3&cursor=${d1.body.nextCursor}`);
    expect([...d1.body.items, ...d2.body.items].map((e: { seq: number }) => e.seq)).toEqual([5, 4, 3, 2, 1]);
    expect(d2.body.nextCursor).toBeNull();
  });

  it('rejects bad query parameters with 400 and issue paths', async () => {
    const r = await get('?limit=0&type=bogus&from=yesterday');
    expect(r.status).toBe(400);
    expect(r.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(['from', 'limit', 'type']);
  });

  it("keeps each organization's events to itself, even with the same ids and server names", async () => {
    const r = await get('', other.key);
    expect(r.body.items).toHaveLength(1);
    expect(r.body.items[0].seq).toBe(1);
    expect((await get('?serverId=srv-1', other.key)).body.items).toHaveLength(1);
  });

  it('stores a retried request once and reports duplicates', async () => {
    const again = await postEvents(app.url, org.key, [toolCall(1, { id: 'a1' }), toolCall(4, { id: 'a4', serverId: 'srv-3' })]);
    expect(again.body).toEqual({ accepted: 1, duplicates: 1 });
    const dupInBatch = await postEvents(app.url, org.key, [toolCall(5, { id: 'a5' }), toolCall(5, { id: 'a5' })]);
    expect(dupInBatch.body).toEqual({ accepted: 1, duplicates: 1 });
  });

  it('registers unseen servers in the organization', async () => {
    const r = await app.ctx.db.query<{ server_id: string }>('SELECT server_id FROM servers WHERE org_id = $1 ORDER BY server_id', [org.id]);
    expect(r.rows.map((x) => x.server_id)).toEqual(expect.arrayContaining(['srv-1', 'srv-2', 'srv-3']));
  });
});
