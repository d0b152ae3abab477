// GET/PUT /api/v1/anomalies/acknowledgement: acknowledged anomalies are kept on the server for the whole organization.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, login, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

describe.each(backendNames)('anomaly acknowledgement (%s)', (backendName) => {
  const { app } = suiteApp(backendName);
  let org: TestOrg;
  const path = () => `${app.url}/api/v1/anomalies/acknowledgement`;

  beforeAll(async () => {
    org = await createOrg(app.url);
    expect((await postEvents(app.url, org.key, [toolCall(1), toolCall(2), toolCall(3)])).status).toBe(200);
  });

  it('starts at none, is raised by a member signed in, read back by a key, and never lowered', async () => {
    expect((await http(path(), { headers: bearer(org.key) })).body).toEqual({ upToSeq: 0, acknowledgedBy: null, acknowledgedAt: null });
    const cookie = await login(app.url, org.email, org.password);
    const put = await http(path(), { method: 'PUT', headers: { cookie, origin: app.url }, json: { upToSeq: 2 } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ upToSeq: 2, acknowledgedBy: `user:${org.email}` });
    expect((await http(path(), { headers: bearer(org.key) })).body).toEqual(put.body);
    const lower = await http(path(), { method: 'PUT', headers: bearer(org.key), json: { upToSeq: 1 } });
    expect(lower.body).toEqual(put.body);
  });

  it('caps at the last stored seq, and is the organization\'s own', async () => {
    const r = await http(path(), { method: 'PUT', headers: bearer(org.key), json: { upToSeq: 1_000_000 } });
    expect(r.body.upToSeq).toBe(3);
    const other = await createOrg(app.url);
    expect((await http(path(), { headers: bearer(other.key) })).body.upToSeq).toBe(0);
  });

  it('needs sessions:write to change and refuses a bad body', async () => {
    const reader = await createOrg(app.url, { scopes: ['events:read'] });
    expect((await http(path(), { method: 'PUT', headers: bearer(reader.key), json: { upToSeq: 1 } })).status).toBe(403);
    const bad = await http(path(), { method: 'PUT', headers: bearer(org.key), json: { upToSeq: -1, extra: true } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_body');
  });
});
