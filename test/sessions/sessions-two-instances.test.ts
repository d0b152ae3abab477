// Sessions across two instances sharing Postgres and Redis: transitions race between instances, updates reach streams on both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realBackend, realBackendAvailable, type Backend } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, startApp, toolCall, type RunningApp, type TestOrg } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';

describe.runIf(realBackendAvailable)('sessions on two instances (real)', () => {
  let backend: Backend;
  let a: RunningApp;
  let b: RunningApp;
  let org: TestOrg;

  const transition = (app: RunningApp, id: string, op: 'suspend' | 'resume', reason?: string) =>
    http(`${app.url}/api/v1/sessions/${id}/${op}`, { method: 'POST', headers: bearer(org.key), json: reason === undefined ? {} : { reason } });

  beforeAll(async () => {
    backend = await realBackend();
    a = await startApp(backend.env);
    b = await startApp(backend.env);
    org = await createOrg(a.url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await backend?.cleanup();
  });

  it('streams create, suspend and resume in order to clients of both instances, whichever instance made the change', async () => {
    const onA = await openSse(`${a.url}/api/v1/events?types=session_update`, bearer(org.key));
    const onB = await openSse(`${b.url}/api/v1/events?types=session_update`, bearer(org.key));
    await postEvents(b.url, org.key, [toolCall(1, { sessionId: 'x-1' })]);
    expect((await transition(a, 'x-1', 'suspend', 'from a')).status).toBe(200);
    expect((await transition(b, 'x-1', 'resume', 'from b')).status).toBe(200);
    for (const c of [onA, onB]) {
      await c.waitForCount(3);
      expect(c.events.map((e) => [e.json.sessionId, e.json.status])).toEqual([
        ['x-1', 'active'],
        ['x-1', 'suspended'],
        ['x-1', 'active'],
      ]);
    }
    expect(onA.events.map((e) => e.id)).toEqual(onB.events.map((e) => e.id));
    onA.close();
    onB.close();
  });

  it('lets exactly one of two suspends sent to different instances at once win', async () => {
    for (let round = 0; round < 5; round++) {
      const id = `race-${round}`;
      await postEvents(a.url, org.key, [toolCall(round, { sessionId: id })]);
      const client = await openSse(`${b.url}/api/v1/events?types=session_update`, bearer(org.key));
      const results = await Promise.all([transition(a, id, 'suspend', 'a'), transition(b, id, 'suspend', 'b')]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(results.find((r) => r.status === 409)!.body).toMatchObject({ code: 'conflict', status: 'suspended' });
      const winner = results.find((r) => r.status === 200)!.body;
      // The resume is a later marker: once it is seen, every update of the race has been delivered.
      expect((await transition(a, id, 'resume')).status).toBe(200);
      await client.waitFor((c) => c.events.some((e) => e.json.sessionId === id && e.json.status === 'active'), 15_000, 'resume');
      expect(client.events.filter((e) => e.json.sessionId === id).map((e) => e.json.status)).toEqual(['suspended', 'active']);
      const stored = await http(`${a.url}/api/v1/audit-events?type=session_update&sessionId=${id}&order=asc`, { headers: bearer(org.key) });
      expect(stored.body.items.map((e: { metadata: { transition: string; reason?: string } }) => e.metadata.transition)).toEqual(['created', 'suspended', 'resumed']);
      expect(stored.body.items[1].metadata.reason).toBe(winner.statusReason);
      client.close();
    }
  });
});
