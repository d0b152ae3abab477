// Credentials: stored only as digests, compared in constant time, revoked at once (streams too), login brute force
// limited, cookie flags, Origin checks on cookie-authenticated writes, and CORS grants only to listed origins.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, bearer, createOrg, http, login, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { openSse, type SseClient } from '../helpers/sse.js';
import { LogAudit } from './log-audit.js';
import { redisPrefix } from './processes.js';

const RECHECK_MS = 500;
const DASHBOARD = 'http://dash.example:8080';

describe.runIf(realBackendAvailable)('credentials', () => {
  const audit = new LogAudit('security-credentials');
  let db: { url: string; drop(): Promise<void> };
  let sql: pg.Client;
  let a: RunningApp;
  let b: RunningApp;
  let env: Record<string, string>;
  const extraApps: RunningApp[] = [];

  const newOrg = async () => {
    const org = await createOrg(a.url);
    audit.org(org);
    return org;
  };
  const newKey = async (org: TestOrg, scopes = ['events:read', 'ingest:write', 'sessions:write']) => {
    const r = await http(`${a.url}/api/v1/admin/organizations/${org.id}/api-keys`, { method: 'POST', headers: bearer(ADMIN_TOKEN), json: { name: 'k', scopes } });
    audit.secret('key', r.body.key);
    return { id: r.body.id as string, key: r.body.key as string };
  };
  const signIn = async (app: RunningApp, org: TestOrg) => {
    const c = await login(app.url, org.email, org.password);
    audit.cookie(c);
    return c;
  };
  const extraApp = async (over: Record<string, string>) => {
    const app = await startApp({ ...env, MIGRATE_ON_START: 'false', ...over });
    audit.app(`app ${JSON.stringify(over)}`, app);
    extraApps.push(app);
    return app;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    env = { DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: redisPrefix('creds'), AUTH_RECHECK_MS: String(RECHECK_MS), CORS_ORIGINS: DASHBOARD, LOG_LEVEL: 'debug' };
    a = await startApp(env);
    b = await startApp({ ...env, MIGRATE_ON_START: 'false' });
    audit.app('instance A', a);
    audit.app('instance B', b);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  });

  afterAll(async () => {
    await sql?.end();
    for (const app of [a, b, ...extraApps]) await app?.close();
    await db?.drop();
    audit.assertClean();
  });

  it('keys, login tokens and passwords are stored only as digests: no secret appears anywhere in the database', async () => {
    const org = await newOrg();
    const cookie = await signIn(a, org);
    const token = cookie.slice(cookie.indexOf('=') + 1);
    const row = (await sql.query('SELECT key_prefix, key_hash FROM api_keys WHERE id = $1', [org.keyId])).rows[0];
    expect(row.key_hash).toBe(createHash('sha256').update(org.key).digest('hex'));
    // The shown prefix is the fixed "ask_" and 8 random characters: 48 bits of 256, not enough to guess the rest.
    expect(row.key_prefix).toBe(org.key.slice(0, 12));
    const session = (await sql.query('SELECT token_hash FROM login_sessions WHERE token_hash = $1', [createHash('sha256').update(token).digest('hex')])).rows;
    expect(session).toHaveLength(1);
    const user = (await sql.query('SELECT password_hash FROM users WHERE email = $1', [org.email])).rows[0];
    expect(user.password_hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    // Every row of every table, as text: the key (or its secret part), the cookie token and the password are nowhere.
    const tables = (await sql.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).rows.map((r) => r.tablename as string);
    expect(tables).toEqual(expect.arrayContaining(['api_keys', 'login_sessions', 'users', 'audit_events', 'organizations']));
    for (const t of tables) {
      const dump = (await sql.query(`SELECT coalesce(string_agg(row_to_json(x)::text, E'\\n'), '') AS d FROM "${t}" x`)).rows[0].d as string;
      for (const secret of [org.key, org.key.slice(12), token, org.password]) expect(dump.includes(secret), `${t} holds a secret`).toBe(false);
    }
    // Two logins never share a token; tokens carry 256 bits.
    const again = await signIn(a, org);
    expect(again).not.toBe(cookie);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
  });

  it('keys and the admin token are compared in constant time: a near miss takes no longer to refuse than a far miss', async () => {
    const org = await newOrg();
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const near = flip(org.key, org.key.length - 1); // all but the last character right
    const far = flip(flip(org.key, 4), 5); // wrong from the first random character
    const adminNear = flip(ADMIN_TOKEN, ADMIN_TOKEN.length - 1);
    const adminFar = flip(ADMIN_TOKEN, 0);
    const time = async (headers: Record<string, string>, url: string, init: RequestInit = {}) => {
      const t0 = process.hrtime.bigint();
      const r = await fetch(url, { ...init, headers });
      await r.text();
      expect(r.status).toBe(401);
      return Number(process.hrtime.bigint() - t0) / 1e6;
    };
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const compare = async (name: string, x: () => Promise<number>, y: () => Promise<number>) => {
      for (let i = 0; i < 30; i++) await Promise.all([x(), y()]); // warm up
      const xs: number[] = [];
      const ys: number[] = [];
      // Interleaved, so load from elsewhere on the machine falls on both alike.
      for (let i = 0; i < 300; i++) {
        xs.push(await x());
        ys.push(await y());
      }
      const [mx, my] = [median(xs), median(ys)];
      // The median of paired differences: robust to the machine getting busier or quieter during the run.
      const diff = median(xs.map((x, i) => x - ys[i]));
      console.log(`${name}: median near miss ${mx.toFixed(3)} ms, far miss ${my.toFixed(3)} ms, median paired difference ${diff.toFixed(3)} ms`);
      // Coarse by nature (a network round trip and a database lookup are in every sample): it catches a comparison
      // that stops at the first differing byte of something slow, not nanosecond leaks. Those the design rules out:
      // the key's SHA-256 is looked up, and digests are compared with crypto.timingSafeEqual.
      expect(Math.abs(diff)).toBeLessThan(Math.max(0.5, 0.25 * Math.min(mx, my)));
    };
    const url = `${a.url}/api/v1/audit-events?limit=1`;
    await compare('API key', () => time(bearer(near), url), () => time(bearer(far), url));
    const adminUrl = `${a.url}/api/v1/admin/organizations`;
    const post = { method: 'POST', body: '{"name":"x"}' };
    await compare('admin token', () => time({ ...bearer(adminNear), 'content-type': 'application/json' }, adminUrl, post), () => time({ ...bearer(adminFar), 'content-type': 'application/json' }, adminUrl, post));
  });

  /** Resolves with how long after `since` the stream ended (it must end, not hang). */
  const endedWithin = async (s: SseClient, since: number, timeoutMs = 60_000) => {
    await Promise.race([s.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('stream still open')), timeoutMs))]);
    return Date.now() - since;
  };

  it('a revoked key stops working at once on new requests, and its open streams close on every instance', async () => {
    const org = await newOrg();
    for (const how of ['operator', 'org admin', 'database only']) {
      const k = await newKey(org);
      const onA = await openSse(`${a.url}/api/v1/events`, bearer(k.key));
      const onB = await openSse(`${b.url}/api/v1/events`, bearer(k.key));
      expect([onA.status, onB.status]).toEqual([200, 200]);
      const t0 = Date.now();
      if (how === 'operator') expect((await http(`${a.url}/api/v1/admin/api-keys/${k.id}`, { method: 'DELETE', headers: bearer(ADMIN_TOKEN) })).status).toBe(204);
      if (how === 'org admin') {
        const cookie = await signIn(a, org);
        expect((await http(`${a.url}/api/v1/api-keys/${k.id}`, { method: 'DELETE', headers: { cookie, origin: a.url } })).status).toBe(204);
      }
      // Revoked behind the service's back (e.g. by a script, or while Redis was away): no broadcast, the periodic re-check finds it.
      if (how === 'database only') await sql.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [k.id]);
      for (const app of [a, b]) {
        expect((await http(`${app.url}/api/v1/audit-events`, { headers: bearer(k.key) })).status, `${how}: new request`).toBe(401);
        expect((await http(`${app.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(k.key), json: { serverId: 's', toolName: 't' } })).status).toBe(401);
        expect((await openSse(`${app.url}/api/v1/events`, bearer(k.key))).status).toBe(401);
      }
      const ms = Math.max(await endedWithin(onA, t0), await endedWithin(onB, t0));
      console.log(`key revoked by ${how}: streams on both instances closed after ${ms} ms`);
      expect(ms).toBeLessThan(how === 'database only' ? RECHECK_MS * 4 + 2000 : 2000);
      expect(onA.comments.join(' ')).toMatch(/revoked/);
    }
  });

  it('a signed-out or expired login stops working at once on new requests, and its open streams close', async () => {
    const org = await newOrg();
    for (const how of ['logout', 'expired']) {
      const cookie = await signIn(a, org);
      const onA = await openSse(`${a.url}/api/v1/events`, { cookie });
      const onB = await openSse(`${b.url}/api/v1/events`, { cookie });
      expect([onA.status, onB.status]).toEqual([200, 200]);
      const t0 = Date.now();
      if (how === 'logout') {
        const out = await fetch(`${a.url}/api/v1/auth/logout`, { method: 'POST', headers: { cookie, origin: a.url } });
        expect(out.status).toBe(204);
        // The cookie is cleared with the flags it was set with.
        expect(out.headers.getSetCookie().join('\n')).toMatch(/audit_stream_session=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/);
      } else {
        const token = cookie.slice(cookie.indexOf('=') + 1);
        await sql.query('UPDATE login_sessions SET expires_at = now() WHERE token_hash = $1', [createHash('sha256').update(token).digest('hex')]);
      }
      for (const app of [a, b]) {
        expect((await http(`${app.url}/api/v1/auth/me`, { headers: { cookie } })).status, how).toBe(401);
        expect((await http(`${app.url}/api/v1/audit-events`, { headers: { cookie } })).status, how).toBe(401);
      }
      const ms = Math.max(await endedWithin(onA, t0), await endedWithin(onB, t0));
      console.log(`login ${how}: streams on both instances closed after ${ms} ms`);
      expect(ms).toBeLessThan(how === 'expired' ? RECHECK_MS * 4 + 2000 : 2000);
    }
  });

  it('login brute force is rate-limited per address and email (429 + Retry-After), whatever the spelling of the email', async () => {
    const limited = await extraApp({ LOGIN_RATE_LIMIT_MAX: '5', LOGIN_RATE_LIMIT_WINDOW_SECONDS: '60' });
    const org = await newOrg();
    const attempt = (email: string, password: string, headers: Record<string, string> = {}) =>
      http(`${limited.url}/api/v1/auth/login`, { method: 'POST', headers, json: { email, password } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await attempt(org.email, `wrong-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    for (const variant of [org.email, org.email.toUpperCase(), `  ${org.email} `]) {
      const r = await attempt(variant, 'wrong again', { 'x-forwarded-for': '203.0.113.7' });
      expect(r.status, variant).toBe(429);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.body).toMatchObject({ statusCode: 429, code: 'too_many_requests' });
    }
    // Locked out for the window: the right password is refused too, so guessing on cannot confirm a hit.
    expect((await attempt(org.email, org.password)).status).toBe(429);
    // Another account from the same address is not locked by this one.
    const other = await newOrg();
    expect((await attempt(other.email, other.password)).status).toBe(200);
    // An unknown email and a wrong password look the same: same status, same message.
    const unknown = await attempt(`nobody-${Date.now()}@example.test`, 'whatever');
    const wrong = await attempt(other.email, 'wrong');
    expect([unknown.status, unknown.body.message]).toEqual([wrong.status, wrong.body.message]);
  });

  it('login cookie flags: HttpOnly, SameSite, Path=/, expiry; Secure when configured or when SameSite=None', async () => {
    const org = await newOrg();
    const cookieOf = async (app: RunningApp) => {
      const res = await fetch(`${app.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: org.email, password: org.password }) });
      expect(res.status).toBe(200);
      const c = res.headers.getSetCookie().find((x) => x.startsWith('audit_stream_session='))!;
      audit.cookie(c.split(';')[0]);
      return c.split(';').map((p) => p.trim());
    };
    const plain = await cookieOf(a);
    expect(plain).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Lax', 'Path=/']));
    expect(plain.some((p) => p.startsWith('Expires='))).toBe(true);
    expect(plain).not.toContain('Secure');
    const secure = await cookieOf(await extraApp({ COOKIE_SECURE: 'true' }));
    expect(secure).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Lax', 'Secure']));
    const none = await cookieOf(await extraApp({ COOKIE_SAME_SITE: 'none' }));
    expect(none).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=None', 'Secure']));
    const strict = await cookieOf(await extraApp({ COOKIE_SAME_SITE: 'strict' }));
    expect(strict).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict']));
  });

  it('cookie-authenticated writes need an Origin that is the service’s own or listed; keys are not ambient and need none', async () => {
    const org = await newOrg();
    const cookie = await signIn(a, org);
    const port = new URL(a.url).port;
    const bad = [null, 'http://evil.example', 'null', `http://127.0.0.1:${port}.evil.example`, `http://127.0.0.1:${port}@evil.example`, `https://127.0.0.1:${port}`, `http://127.0.0.1:${Number(port) + 1}`, `http://localhost:${port}`, `${a.url}/`, 'http://dash.example'];
    const k = await newKey(org);
    await http(`${a.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(org.key), json: { serverId: 's', toolName: 't', sessionId: 'origin-sess' } });
    const writes: { name: string; method: string; path: string; json?: unknown }[] = [
      { name: 'switch organization', method: 'PUT', path: '/api/v1/auth/active-organization', json: { organizationId: org.id } },
      { name: 'create key', method: 'POST', path: '/api/v1/api-keys', json: { name: 'csrf' } },
      { name: 'revoke key', method: 'DELETE', path: `/api/v1/api-keys/${k.id}` },
      { name: 'suspend', method: 'POST', path: '/api/v1/sessions/origin-sess/suspend', json: {} },
      { name: 'resume', method: 'POST', path: '/api/v1/sessions/origin-sess/resume', json: {} },
      { name: 'settings', method: 'PUT', path: '/api/v1/anomaly-settings', json: { minRate: 7 } },
      { name: 'sign out', method: 'POST', path: '/api/v1/auth/logout' },
    ];
    const state = async () => (await sql.query(`SELECT (SELECT count(*) FROM api_keys WHERE org_id = $1 AND revoked_at IS NULL) AS keys,
      (SELECT anomaly_settings::text FROM organizations WHERE id = $1) AS settings, (SELECT event_seq FROM organizations WHERE id = $1) AS seq,
      (SELECT count(*) FROM login_sessions) AS logins`, [org.id])).rows[0];
    for (const w of writes) {
      for (const origin of bad) {
        const before = await state();
        const r = await http(`${a.url}${w.path}`, { method: w.method, headers: { cookie, ...(origin === null ? {} : { origin }) }, json: w.json });
        expect(r.status, `${w.name} with Origin ${origin}`).toBe(403);
        expect(r.body.code).toMatch(/^origin_/);
        expect(await state(), `${w.name} with Origin ${origin} changed state`).toEqual(before);
      }
    }
    // The service's own origin and a listed dashboard origin are let through.
    for (const origin of [a.url, DASHBOARD]) {
      const r = await http(`${a.url}/api/v1/anomaly-settings`, { method: 'PUT', headers: { cookie, origin }, json: { minRate: 9 } });
      expect(r.status, origin).toBe(200);
    }
    // A key is never sent by a browser on its own: no Origin needed, and a foreign one changes nothing.
    expect((await http(`${a.url}/api/v1/anomaly-settings`, { method: 'PUT', headers: { ...bearer(org.key), origin: 'http://evil.example' }, json: { minRate: 11 } })).status).toBe(200);
  });

  it('CORS: only listed origins get a grant (with credentials, never *); others get none, preflight included', async () => {
    const org = await newOrg();
    for (const [origin, granted] of [
      [DASHBOARD, true],
      ['http://evil.example', false],
      ['null', false],
    ] as const) {
      const res = await fetch(`${a.url}/api/v1/audit-events`, { headers: { ...bearer(org.key), origin } });
      await res.text();
      expect(res.headers.get('access-control-allow-origin'), origin).toBe(granted ? origin : null);
      expect(res.headers.get('access-control-allow-credentials'), origin).toBe(granted ? 'true' : null);
      const pre = await fetch(`${a.url}/api/v1/anomaly-settings`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type' } });
      await pre.text();
      expect(pre.headers.get('access-control-allow-origin'), `preflight ${origin}`).toBe(granted ? origin : null);
    }
  });
});
