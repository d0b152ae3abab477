// Accounts and credentials on both backends: admin API, API keys and scopes, cookie login, Origin checks, rate limits.
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { ADMIN_TOKEN, bearer, createOrg, http, login, postEvents, toolCall } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

describe.each(backendNames)('authentication (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { LOGIN_RATE_LIMIT_MAX: '5', COOKIE_SECURE: 'true', CORS_ORIGINS: 'http://dash.example:8080' });

  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  it('admin API: creates an organization, a user and a key; needs the admin token', async () => {
    const org = await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', headers: admin, json: { name: 'Acme' } });
    expect(org.status).toBe(201);
    expect(org.body).toEqual({ id: expect.any(String), name: 'Acme' });
    const user = await http(`${app.url}/api/v1/admin/organizations/${org.body.id}/users`, { method: 'POST', headers: admin, json: { email: 'ops@acme.test', password: 'correct horse', role: 'admin' } });
    expect(user.status).toBe(201);
    expect(user.body).toMatchObject({ id: expect.any(String), email: 'ops@acme.test' });
    const key = await http(`${app.url}/api/v1/admin/organizations/${org.body.id}/api-keys`, { method: 'POST', headers: admin, json: { name: 'ci', scopes: ['events:read'] } });
    expect(key.status).toBe(201);
    expect(key.body.key).toMatch(/^ask_[A-Za-z0-9_-]{43}$/);
    expect(key.body.scopes).toEqual(['events:read']);
    const list = await http(`${app.url}/api/v1/audit-events`, { headers: bearer(key.body.key) });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ items: [], nextCursor: null });

    expect((await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', json: { name: 'x' } })).status).toBe(401);
    expect((await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', headers: bearer('wrong-token-0123456789'), json: { name: 'x' } })).status).toBe(401);
    const bad = await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', headers: admin, json: { name: '' } });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toBe('name');
    const missing = await http(`${app.url}/api/v1/admin/organizations/00000000-0000-0000-0000-000000000000/api-keys`, { method: 'POST', headers: admin, json: { name: 'k' } });
    expect(missing.status).toBe(404);
  });

  it('stores API keys hashed, never in clear', async () => {
    const org = await createOrg(app.url);
    const rows = await app.ctx.db.query<{ key_hash: string; key_prefix: string }>('SELECT key_hash, key_prefix FROM api_keys WHERE id = $1', [org.keyId]);
    expect(rows.rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows.rows[0].key_hash).not.toContain(org.key);
    expect(org.key.startsWith(rows.rows[0].key_prefix)).toBe(true);
    const users = await app.ctx.db.query<{ password_hash: string }>('SELECT password_hash FROM users WHERE email = $1', [org.email]);
    expect(users.rows[0].password_hash).toMatch(/^scrypt\$/);
    expect(users.rows[0].password_hash).not.toContain(org.password);
  });

  it('401 for missing, malformed, unknown and revoked keys; 403 for a missing scope', async () => {
    const org = await createOrg(app.url, { scopes: ['events:read'] });
    expect((await http(`${app.url}/api/v1/audit-events`)).status).toBe(401);
    expect((await http(`${app.url}/api/v1/audit-events`, { headers: { authorization: 'Basic abc' } })).status).toBe(401);
    expect((await http(`${app.url}/api/v1/audit-events`, { headers: bearer('ask_' + 'A'.repeat(43)) })).status).toBe(401);
    const denied = await postEvents(app.url, org.key, toolCall(1));
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ statusCode: 403, error: 'Forbidden', code: 'missing_scope' });
    expect((await http(`${app.url}/api/v1/admin/api-keys/${org.keyId}`, { method: 'DELETE', headers: admin })).status).toBe(204);
    const revoked = await http(`${app.url}/api/v1/audit-events`, { headers: bearer(org.key) });
    expect(revoked.status).toBe(401);
    expect(revoked.body).toMatchObject({ statusCode: 401, code: 'unauthorized' });
  });

  it('cookie login: HttpOnly, SameSite=Lax, Secure when configured; me, active organization, logout', async () => {
    const org = await createOrg(app.url);
    const second = await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', headers: admin, json: { name: 'Second' } });
    await http(`${app.url}/api/v1/admin/organizations/${second.body.id}/users`, { method: 'POST', headers: admin, json: { email: org.email, password: 'ignored-password', role: 'member' } });

    const res = await fetch(`${app.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: org.email.toUpperCase(), password: org.password }) });
    expect(res.status).toBe(200);
    const setCookie = res.headers.getSetCookie()[0];
    expect(setCookie).toMatch(/^audit_stream_session=/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/SameSite=Lax/i);
    expect(setCookie).toMatch(/Secure/i);
    const body = await res.json();
    expect(body.user.email).toBe(org.email);
    expect(body.organizations.map((o: { id: string }) => o.id)).toEqual([org.id, second.body.id]);
    expect(body.activeOrganizationId).toBe(org.id);
    const cookie = setCookie.split(';')[0];

    const me = await http(`${app.url}/api/v1/auth/me`, { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(me.body.activeOrganizationId).toBe(org.id);

    // Switching needs the Origin check (cookie-authenticated unsafe method).
    const noOrigin = await http(`${app.url}/api/v1/auth/active-organization`, { method: 'PUT', headers: { cookie }, json: { organizationId: second.body.id } });
    expect(noOrigin.status).toBe(403);
    expect(noOrigin.body.code).toBe('origin_required');
    const evil = await http(`${app.url}/api/v1/auth/active-organization`, { method: 'PUT', headers: { cookie, origin: 'http://evil.example' }, json: { organizationId: second.body.id } });
    expect(evil.status).toBe(403);
    expect(evil.body.code).toBe('origin_not_allowed');
    const switched = await http(`${app.url}/api/v1/auth/active-organization`, { method: 'PUT', headers: { cookie, origin: app.url }, json: { organizationId: second.body.id } });
    expect(switched.status).toBe(200);
    expect(switched.body.activeOrganizationId).toBe(second.body.id);
    const listed = await http(`${app.url}/api/v1/auth/active-organization`, { method: 'PUT', headers: { cookie, origin: 'http://dash.example:8080' }, json: { organizationId: org.id } });
    expect(listed.status).toBe(200);
    const stranger = await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', headers: admin, json: { name: 'Stranger' } });
    const notMember = await http(`${app.url}/api/v1/auth/active-organization`, { method: 'PUT', headers: { cookie, origin: app.url }, json: { organizationId: stranger.body.id } });
    expect(notMember.status).toBe(403);

    const out = await http(`${app.url}/api/v1/auth/logout`, { method: 'POST', headers: { cookie, origin: app.url } });
    expect(out.status).toBe(204);
    expect((await http(`${app.url}/api/v1/auth/me`, { headers: { cookie } })).status).toBe(401);
  });

  it('rejects wrong passwords with 401 and rate-limits repeated attempts with 429 and Retry-After', async () => {
    const org = await createOrg(app.url);
    const attempt = () => http(`${app.url}/api/v1/auth/login`, { method: 'POST', json: { email: org.email, password: 'wrong' } });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await attempt()).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
    const limited = await attempt();
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ statusCode: 429, code: 'too_many_requests' });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The right password is refused too while limited: brute force gains nothing.
    expect((await http(`${app.url}/api/v1/auth/login`, { method: 'POST', json: { email: org.email, password: org.password } })).status).toBe(429);
  });

  it('org admins manage their own keys; members cannot; keys of another org are out of reach', async () => {
    const org = await createOrg(app.url);
    const other = await createOrg(app.url);
    const cookie = await login(app.url, org.email, org.password);
    const h = { cookie, origin: app.url };
    const created = await http(`${app.url}/api/v1/api-keys`, { method: 'POST', headers: h, json: { name: 'reader', scopes: ['events:read'] } });
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^ask_/);
    const list = await http(`${app.url}/api/v1/api-keys`, { headers: { cookie } });
    expect(list.status).toBe(200);
    expect(list.body.items.map((k: { id: string }) => k.id)).toContain(created.body.id);
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
    expect((await http(`${app.url}/api/v1/api-keys/${other.keyId}`, { method: 'DELETE', headers: h })).status).toBe(404);
    expect((await http(`${app.url}/api/v1/audit-events`, { headers: bearer(other.key) })).status).toBe(200);
    expect((await http(`${app.url}/api/v1/api-keys/${created.body.id}`, { method: 'DELETE', headers: h })).status).toBe(204);
    expect((await http(`${app.url}/api/v1/audit-events`, { headers: bearer(created.body.key) })).status).toBe(401);
    // API keys cannot manage keys.
    expect((await http(`${app.url}/api/v1/api-keys`, { headers: bearer(org.key) })).status).toBe(403);

    const member = await createOrg(app.url, { role: 'member' });
    const memberCookie = await login(app.url, member.email, member.password);
    expect((await http(`${app.url}/api/v1/api-keys`, { headers: { cookie: memberCookie } })).status).toBe(403);
  });
});
