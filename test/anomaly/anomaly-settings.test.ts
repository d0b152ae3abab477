// GET/PUT /api/v1/anomaly-settings on both backends: defaults from config, partial updates and resets, validation, permissions.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames, makeBackend } from '../helpers/backends.js';
import { bearer, createOrg, http, login, startApp, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

const DEFAULTS = { windowSeconds: 60, minRate: 100, multiplier: 3, cooldownSeconds: 300, suspendSessionsOnSpike: false };

describe.each(backendNames)('anomaly settings (%s)', (backendName) => {
  const { app } = suiteApp(backendName);
  let org: TestOrg;
  const url = () => `${app.url}/api/v1/anomaly-settings`;
  const put = (headers: Record<string, string>, json: unknown) => http(url(), { method: 'PUT', headers, json });

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  it('returns the service defaults until changed, then the effective settings; other orgs keep theirs', async () => {
    const o = await createOrg(app.url);
    expect((await http(url(), { headers: bearer(o.key) })).body).toEqual(DEFAULTS);
    const r = await put(bearer(o.key), { windowSeconds: 10, minRate: 20.5 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ ...DEFAULTS, windowSeconds: 10, minRate: 20.5 });
    const r2 = await put(bearer(o.key), { suspendSessionsOnSpike: true, multiplier: 4 });
    expect(r2.body).toEqual({ ...DEFAULTS, windowSeconds: 10, minRate: 20.5, multiplier: 4, suspendSessionsOnSpike: true });
    expect((await http(url(), { headers: bearer(o.key) })).body).toEqual(r2.body);
    // null puts one setting back to the default; {} changes nothing.
    const r3 = await put(bearer(o.key), { minRate: null, suspendSessionsOnSpike: null });
    expect(r3.body).toEqual({ ...DEFAULTS, windowSeconds: 10, multiplier: 4 });
    expect((await put(bearer(o.key), {})).body).toEqual(r3.body);
    expect((await http(url(), { headers: bearer(org.key) })).body).toEqual(DEFAULTS);
  });

  it('rejects invalid settings with 400 naming the field, and changes nothing', async () => {
    const o = await createOrg(app.url);
    const bad: [string, unknown][] = [
      ['windowSeconds', 0],
      ['windowSeconds', 3601],
      ['windowSeconds', 1.5],
      ['minRate', 0],
      ['minRate', -1],
      ['minRate', '100'],
      ['multiplier', 0.5],
      ['cooldownSeconds', 0],
      ['cooldownSeconds', 86_401],
      ['suspendSessionsOnSpike', 'yes'],
      ['threshold', 5],
    ];
    for (const [field, value] of bad) {
      const r = await put(bearer(o.key), { [field]: value });
      expect(r.status, `${field}=${JSON.stringify(value)}`).toBe(400);
      expect(r.body).toMatchObject({ statusCode: 400, code: 'invalid_body' });
      expect(JSON.stringify(r.body.issues)).toContain(field);
    }
    expect((await put(bearer(o.key), [1])).status).toBe(400);
    expect((await http(url(), { headers: bearer(o.key) })).body).toEqual(DEFAULTS);
  });

  it('lets events:read read; lets org admins (cookie) and keys with sessions:write change', async () => {
    const reader = await createOrg(app.url, { scopes: ['events:read'] });
    expect((await http(url(), { headers: bearer(reader.key) })).status).toBe(200);
    const denied = await put(bearer(reader.key), { minRate: 10 });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('missing_scope');
    const ingestOnly = await createOrg(app.url, { scopes: ['ingest:write'] });
    expect((await http(url(), { headers: bearer(ingestOnly.key) })).status).toBe(403);
    expect((await http(url())).status).toBe(401);

    const admin = await login(app.url, org.email, org.password);
    expect((await put({ cookie: admin, origin: app.url }, { minRate: 11 })).body.minRate).toBe(11);
    expect((await put({ cookie: admin }, { minRate: 12 })).status).toBe(403); // no Origin
    const member = await createOrg(app.url, { role: 'member' });
    const memberCookie = await login(app.url, member.email, member.password);
    expect((await http(url(), { headers: { cookie: memberCookie } })).status).toBe(200);
    const m = await put({ cookie: memberCookie, origin: app.url }, { minRate: 13 });
    expect(m.status).toBe(403);
    expect(m.body.message).toContain('org:admin');
    expect((await put(bearer(member.key), { minRate: 14 })).body.minRate).toBe(14);
  });
});

describe('anomaly settings defaults from the environment', () => {
  it('takes its defaults from ANOMALY_* settings', async () => {
    const backend = await makeBackend('embedded');
    const app = await startApp({ ...backend.env, ANOMALY_WINDOW_SECONDS: '30', ANOMALY_MIN_RATE: '50', ANOMALY_MULTIPLIER: '5', ANOMALY_COOLDOWN_SECONDS: '60' });
    try {
      const org = await createOrg(app.url);
      const r = await http(`${app.url}/api/v1/anomaly-settings`, { headers: bearer(org.key) });
      expect(r.body).toEqual({ windowSeconds: 30, minRate: 50, multiplier: 5, cooldownSeconds: 60, suspendSessionsOnSpike: false });
    } finally {
      await app.close();
      await backend.cleanup();
    }
  });
});
