// Isolation matrix: for every route and every ordered pair of organizations, one's key or cookie can neither read nor write
// the other's data, even where server ids, session ids and idempotency keys are the same in both (two instances).
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, bearer, createOrg, http, login, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { openSse } from '../helpers/sse.js';
import { storedEvents } from './checker.js';
import { LogAudit } from './log-audit.js';
import { redisPrefix } from './processes.js';

interface Tenant extends TestOrg {
  tag: string;
  /** latencyMs of this org's tool calls fall in [base, base + 1000): how a streamed event shows whose it is. */
  base: number;
  cookie: string;
  sharedCalls: number;
}

const SHARED_SERVER = 'srv-shared';
const SHARED_SESSION = 'sess-shared';

describe.runIf(realBackendAvailable)('organizations are isolated on every route', () => {
  const audit = new LogAudit('security-isolation');
  let db: { url: string; drop(): Promise<void> };
  let a: RunningApp;
  let b: RunningApp;
  const tenants: Tenant[] = [];

  const ownerOf = (latencyMs: number) => tenants.find((t) => latencyMs >= t.base && latencyMs < t.base + 1000)?.tag ?? `unknown(${latencyMs})`;

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = { DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: redisPrefix('iso'), ANOMALY_MIN_RATE: '1000000000' };
    a = await startApp(env);
    b = await startApp(env);
    audit.app('instance A', a);
    audit.app('instance B', b);
    for (const [i, tag] of ['X', 'Y', 'Z'].entries()) {
      const org = await createOrg(a.url);
      const cookie = await login(a.url, org.email, org.password);
      audit.org(org);
      audit.cookie(cookie);
      const t: Tenant = { ...org, tag, base: (i + 1) * 1000, cookie, sharedCalls: 3 + i };
      tenants.push(t);
      // Every org uses the same server id, session id and idempotency keys; each also has a session only it has.
      const events = [
        ...Array.from({ length: t.sharedCalls }, (_, j) => ({ id: `evt-${j}`, serverId: SHARED_SERVER, sessionId: SHARED_SESSION, toolName: 'search', action: 'allow', latencyMs: t.base + j, metadata: { owner: tag } })),
        { id: 'evt-own', serverId: SHARED_SERVER, sessionId: `only-${tag}`, toolName: 'search', action: 'allow', latencyMs: t.base + 500, metadata: { owner: tag } },
      ];
      const r = await http(`${a.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(t.key), json: events });
      // The same idempotency keys as another org's events are not duplicates here.
      expect(r.body).toEqual({ accepted: events.length, duplicates: 0 });
    }
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
    audit.assertClean();
  });

  const pairs = () => tenants.flatMap((actor) => tenants.filter((t) => t !== actor).map((target) => [actor, target] as const));

  it('matrix: reads (stream with replay and filters, audit events, sessions, settings, keys, me) show only the caller’s organization', async () => {
    for (const [actor, target] of pairs()) {
      for (const [kind, creds] of [
        ['key', bearer(actor.key)],
        ['cookie', { cookie: actor.cookie }],
      ] as const) {
        const who = `${actor.tag} (${kind}) vs ${target.tag}`;
        for (const app of [a, b]) {
          // Stream, replaying everything, filtered on the shared server id: only the actor's events.
          const s = await openSse(`${app.url}/api/v1/events?serverId=${SHARED_SERVER}`, { ...creds, 'last-event-id': '0' });
          expect(s.status, who).toBe(200);
          const expected = (await storedEvents(db.url, actor.id)).rows.filter((r) => r.payload && (r.payload as { serverId?: string }).serverId === SHARED_SERVER).length;
          await s.waitFor((c) => c.events.length >= expected, 15_000, `${expected} events`);
          expect(s.events.filter((e) => e.event === 'tool_call').map((e) => ownerOf(e.json.latencyMs)).every((o) => o === actor.tag), who).toBe(true);
          s.close();
        }
        const events = await http(`${b.url}/api/v1/audit-events?type=tool_call&serverId=${SHARED_SERVER}&sessionId=${SHARED_SESSION}&limit=1000`, { headers: creds });
        expect(events.status, who).toBe(200);
        expect(events.body.items.length, who).toBe(actor.sharedCalls);
        expect(events.body.items.every((e: { metadata: { owner: string } }) => e.metadata.owner === actor.tag), who).toBe(true);
        // Cursors are seqs, which every org has: paging from one never reaches another org.
        const paged = await http(`${b.url}/api/v1/audit-events?cursor=999999&limit=1000`, { headers: creds });
        expect(paged.body.items.every((e: { metadata: { owner?: string } }) => e.metadata.owner === undefined || e.metadata.owner === actor.tag), who).toBe(true);

        const sessions = await http(`${a.url}/api/v1/sessions?limit=500`, { headers: creds });
        const ids = sessions.body.items.map((x: { sessionId: string }) => x.sessionId);
        expect(ids, who).toContain(`only-${actor.tag}`);
        expect(ids, who).not.toContain(`only-${target.tag}`);
        const shared = await http(`${a.url}/api/v1/sessions/${SHARED_SESSION}`, { headers: creds });
        expect(shared.body.toolCallCount, who).toBe(actor.sharedCalls);
        expect((await http(`${b.url}/api/v1/sessions/only-${target.tag}`, { headers: creds })).status, who).toBe(404);
        const byServer = await http(`${b.url}/api/v1/sessions?serverId=${SHARED_SERVER}`, { headers: creds });
        expect(byServer.body.items.map((x: { sessionId: string }) => x.sessionId).sort(), who).toEqual([`only-${actor.tag}`, SHARED_SESSION].sort());

        const me = await http(`${a.url}/api/v1/auth/me`, { headers: creds });
        expect(kind === 'key' ? me.body.organization.id : me.body.activeOrganizationId, who).toBe(actor.id);
      }
      // An org admin's cookie lists only its own org's keys.
      const keys = await http(`${a.url}/api/v1/api-keys`, { headers: { cookie: actor.cookie } });
      expect(keys.status).toBe(200);
      const keyIds = keys.body.items.map((k: { id: string }) => k.id);
      expect(keyIds).toContain(actor.keyId);
      expect(keyIds).not.toContain(target.keyId);
    }
  });

  it('matrix: writes (suspend/resume, settings, key revocation and creation, active organization, every ingest route) touch only the caller’s organization', async () => {
    for (const [actor, target] of pairs()) {
      const who = `${actor.tag} vs ${target.tag}`;
      const targetBefore = await storedEvents(db.url, target.id);
      const origin = { origin: a.url };
      for (const [kind, creds] of [
        ['key', bearer(actor.key)],
        ['cookie', { cookie: actor.cookie }],
      ] as const) {
        // A cookie's unsafe request carries the Origin of the instance it goes to (its own page).
        const to = (app: RunningApp) => (kind === 'cookie' ? { ...creds, origin: app.url } : creds);
        // A session only the target has: unknown to the actor.
        expect((await http(`${a.url}/api/v1/sessions/only-${target.tag}/suspend`, { method: 'POST', headers: to(a) })).status, `${who} ${kind}`).toBe(404);
        // The shared session id: the actor suspends (and resumes) its own; the target's stays active.
        const sus = await http(`${b.url}/api/v1/sessions/${SHARED_SESSION}/suspend`, { method: 'POST', headers: to(b), json: { reason: `by ${actor.tag}` } });
        expect(sus.status, `${who} ${kind}`).toBe(200);
        expect((await http(`${a.url}/api/v1/sessions/${SHARED_SESSION}`, { headers: bearer(target.key) })).body.status, who).toBe('active');
        expect((await http(`${b.url}/api/v1/sessions/${SHARED_SESSION}/resume`, { method: 'POST', headers: to(b) })).status).toBe(200);

        // Settings are the actor's own.
        const minRate = actor.base + (kind === 'key' ? 1 : 2);
        expect((await http(`${a.url}/api/v1/anomaly-settings`, { method: 'PUT', headers: to(a), json: { minRate } })).status, who).toBe(200);
        expect((await http(`${b.url}/api/v1/anomaly-settings`, { headers: bearer(target.key) })).body.minRate, who).not.toBe(minRate);

        // Ingest with the actor's key on every route lands in the actor's org, whatever the body claims.
        if (kind === 'key') {
          const claim = await http(`${a.url}/api/v1/ingest/events`, { method: 'POST', headers: creds, json: { serverId: SHARED_SERVER, toolName: 't', orgId: target.id } });
          expect(claim.status, who).toBe(400);
          const cw = await http(`${a.url}/api/v1/ingest/cloudwatch`, { method: 'POST', headers: creds, json: { logGroup: `/org/${target.id}`, logStream: 's', events: [{ message: `tool=t server=${SHARED_SERVER} org=${target.id}`, timestamp: new Date().toISOString() }] } });
          expect(cw.status, who).toBe(200);
          const dd = await http(`${b.url}/api/v1/ingest/datadog`, { method: 'POST', headers: creds, json: { title: 'x', body: `tool=t org_id=${target.id}`, tags: `org:${target.id}`, timestamp: new Date().toISOString() } });
          expect(dd.status, who).toBe(200);
          const record = gzipSync(JSON.stringify({ messageType: 'DATA_MESSAGE', owner: target.id, logGroup: 'g', logStream: 's', subscriptionFilters: [], logEvents: [{ id: `${Date.now()}${actor.tag}`, timestamp: Date.now(), message: 'tool=t' }] })).toString('base64');
          const fh = await http(`${b.url}/api/v1/ingest/firehose`, { method: 'POST', headers: { 'x-amz-firehose-access-key': actor.key }, json: { requestId: `req-${actor.tag}-${target.tag}`, timestamp: Date.now(), records: [{ data: record }] } });
          expect(fh.status, who).toBe(200);
        }
      }
      // Keys: the target's key cannot be revoked through the actor's org; a key the actor creates is the actor's.
      expect((await http(`${a.url}/api/v1/api-keys/${target.keyId}`, { method: 'DELETE', headers: { cookie: actor.cookie, ...origin } })).status, who).toBe(404);
      expect((await http(`${b.url}/api/v1/audit-events?limit=1`, { headers: bearer(target.key) })).status, `${who}: target key still works`).toBe(200);
      const created = await http(`${a.url}/api/v1/api-keys`, { method: 'POST', headers: { cookie: actor.cookie, ...origin }, json: { name: `made by ${actor.tag}`, scopes: ['events:read'] } });
      expect(created.status).toBe(201);
      audit.secret('created key', created.body.key);
      expect((await http(`${b.url}/api/v1/auth/me`, { headers: bearer(created.body.key) })).body.organization.id, who).toBe(actor.id);
      // Switching the login to an org the user is not a member of is refused.
      const sw = await http(`${a.url}/api/v1/auth/active-organization`, { method: 'PUT', headers: { cookie: actor.cookie, ...origin }, json: { organizationId: target.id } });
      expect(sw.status, who).toBe(403);
      expect((await http(`${a.url}/api/v1/auth/me`, { headers: { cookie: actor.cookie } })).body.activeOrganizationId).toBe(actor.id);
      // Nothing the actor did reached the target's record.
      const targetAfter = await storedEvents(db.url, target.id);
      expect(targetAfter.rows.length, `${who}: target events`).toBe(targetBefore.rows.length);
      expect(targetAfter.counter).toBe(targetBefore.counter);
    }
  });

  it('neither keys nor cookies of an organization reach the operator admin API', async () => {
    for (const t of tenants) {
      for (const creds of [bearer(t.key), { cookie: t.cookie, origin: a.url }]) {
        expect((await http(`${a.url}/api/v1/admin/organizations`, { method: 'POST', headers: creds, json: { name: 'x' } })).status).toBe(401);
        expect((await http(`${a.url}/api/v1/admin/organizations/${t.id}/api-keys`, { method: 'POST', headers: creds, json: { name: 'x' } })).status).toBe(401);
        expect((await http(`${a.url}/api/v1/admin/api-keys/${tenants[0].keyId}`, { method: 'DELETE', headers: creds })).status).toBe(401);
      }
    }
  });

  it('a user in two organizations sees one at a time, the active one, and cannot switch to a third', async () => {
    const [x, y, z] = tenants;
    const email = `both-${Date.now()}@example.test`;
    const password = 'member of two orgs';
    audit.secret('two-org password', password);
    const admin = bearer(ADMIN_TOKEN);
    expect((await http(`${a.url}/api/v1/admin/organizations/${x.id}/users`, { method: 'POST', headers: admin, json: { email, password, role: 'member' } })).status).toBe(201);
    expect((await http(`${a.url}/api/v1/admin/organizations/${y.id}/users`, { method: 'POST', headers: admin, json: { email, password, role: 'member' } })).status).toBe(201);
    const cookie = await login(a.url, email, password);
    audit.cookie(cookie);
    const origin = { origin: a.url };
    for (const t of [x, y]) {
      expect((await http(`${a.url}/api/v1/auth/active-organization`, { method: 'PUT', headers: { cookie, ...origin }, json: { organizationId: t.id } })).status).toBe(200);
      const page = await http(`${b.url}/api/v1/audit-events?serverId=${SHARED_SERVER}&limit=1000`, { headers: { cookie } });
      expect(page.body.items.every((e: { metadata: { owner?: string } }) => e.metadata.owner === undefined || e.metadata.owner === t.tag)).toBe(true);
      const s = await openSse(`${b.url}/api/v1/events?types=tool_call`, { cookie, 'last-event-id': '0' });
      await s.waitFor((c) => c.events.length >= t.sharedCalls + 1, 15_000, 'replay');
      expect(s.events.every((e) => ownerOf(e.json.latencyMs) === t.tag || e.json.latencyMs === null)).toBe(true);
      s.close();
      // A member (not an admin) of the org cannot manage its keys or settings.
      expect((await http(`${a.url}/api/v1/api-keys`, { headers: { cookie } })).status).toBe(403);
      expect((await http(`${a.url}/api/v1/anomaly-settings`, { method: 'PUT', headers: { cookie, ...origin }, json: { minRate: 5 } })).status).toBe(403);
    }
    expect((await http(`${a.url}/api/v1/auth/active-organization`, { method: 'PUT', headers: { cookie, ...origin }, json: { organizationId: z.id } })).status).toBe(403);
  });

  it('scopes: a key reaches only what its scopes allow', async () => {
    const t = tenants[0];
    const make = async (scopes: string[]) => {
      const r = await http(`${a.url}/api/v1/admin/organizations/${t.id}/api-keys`, { method: 'POST', headers: bearer(ADMIN_TOKEN), json: { name: scopes.join('+'), scopes } });
      audit.secret('scoped key', r.body.key);
      return r.body.key as string;
    };
    const readOnly = await make(['events:read']);
    const ingestOnly = await make(['ingest:write']);
    const sessionsOnly = await make(['sessions:write']);
    const post = (key: string) => http(`${a.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(key), json: { serverId: 's', toolName: 't' } });
    expect((await post(readOnly)).status).toBe(403);
    expect((await post(sessionsOnly)).status).toBe(403);
    expect((await post(ingestOnly)).status).toBe(200);
    for (const path of ['/api/v1/audit-events', '/api/v1/sessions', '/api/v1/anomaly-settings']) {
      expect((await http(`${a.url}${path}`, { headers: bearer(ingestOnly) })).status, path).toBe(403);
      expect((await http(`${a.url}${path}`, { headers: bearer(readOnly) })).status, path).toBe(200);
    }
    expect((await openSse(`${a.url}/api/v1/events`, bearer(ingestOnly))).status).toBe(403);
    expect((await http(`${a.url}/api/v1/sessions/${SHARED_SESSION}/suspend`, { method: 'POST', headers: bearer(readOnly) })).status).toBe(403);
    expect((await http(`${a.url}/api/v1/anomaly-settings`, { method: 'PUT', headers: bearer(readOnly), json: { minRate: 5 } })).status).toBe(403);
    // Keys never manage keys (that is for org admins signed in, and the operator).
    expect((await http(`${a.url}/api/v1/api-keys`, { headers: bearer(t.key) })).status).toBe(403);
    expect((await http(`${a.url}/api/v1/api-keys`, { method: 'POST', headers: bearer(t.key), json: { name: 'k' } })).status).toBe(403);
    expect((await http(`${a.url}/api/v1/sessions/${SHARED_SESSION}/suspend`, { method: 'POST', headers: bearer(sessionsOnly) })).status).toBe(200);
    expect((await http(`${a.url}/api/v1/sessions/${SHARED_SESSION}/resume`, { method: 'POST', headers: bearer(sessionsOnly) })).status).toBe(200);
  });
});
