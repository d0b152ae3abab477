// A request part that does not match its route's schema is a 400 naming the part: invalid_query, invalid_params, invalid_body, invalid_headers.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { ADMIN_TOKEN, bearer, createOrg, http, login, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';

describe.each(backendNames)('validation errors by location (%s)', (backendName) => {
  const { app } = suiteApp(backendName);
  let org: TestOrg;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  const error = (code: string, message: string, path: string) => ({
    statusCode: 400,
    error: 'Bad Request',
    code,
    message,
    issues: expect.arrayContaining([expect.objectContaining({ path, message: expect.any(String) })]),
  });

  it('a bad query parameter is invalid_query, on every route that reads a query', async () => {
    for (const path of ['/api/v1/audit-events?limit=abc', '/api/v1/sessions?limit=abc', '/api/v1/audit-events/stats?window=limit']) {
      const r = await http(`${app.url}${path}`, { headers: bearer(org.key) });
      expect(r.status, path).toBe(400);
      const param = path.split('?')[1].split('=')[0];
      expect(r.body, path).toEqual(error('invalid_query', 'query is invalid', param === 'window' ? 'window' : 'limit'));
    }
  });

  it('a bad path parameter is invalid_params', async () => {
    const r = await http(`${app.url}/api/v1/admin/api-keys/not-a-uuid`, { method: 'DELETE', headers: admin });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(error('invalid_params', 'path parameters are invalid', 'id'));
    const cookie = await login(app.url, org.email, org.password);
    const own = await http(`${app.url}/api/v1/api-keys/not-a-uuid`, { method: 'DELETE', headers: { cookie, origin: app.url } });
    expect(own.status).toBe(400);
    expect(own.body).toEqual(error('invalid_params', 'path parameters are invalid', 'id'));
  });

  it('a bad body is invalid_body, with the path of each issue', async () => {
    const r = await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', headers: admin, json: { name: '' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual(error('invalid_body', 'request body is invalid', 'name'));
    const nested = await http(`${app.url}/api/v1/admin/organizations/${org.id}/api-keys`, { method: 'POST', headers: admin, json: { name: 'k', scopes: ['events:read', 'nope'] } });
    expect(nested.body).toEqual(error('invalid_body', 'request body is invalid', 'scopes.1'));
    const root = await http(`${app.url}/api/v1/anomaly-settings`, { method: 'PUT', headers: bearer(org.key), json: [1] });
    expect(root.body).toEqual(error('invalid_body', 'request body is invalid', '(root)'));
  });

  it('a bad header is invalid_headers: a Last-Event-ID that is not an event id', async () => {
    const r = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': 'abc' });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body!)).toEqual(error('invalid_headers', 'headers are invalid', 'last-event-id'));
    // A blank header is no header: the stream opens.
    const ok = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': ' ' });
    expect(ok.status).toBe(200);
    ok.close();
  });

  it('an unknown or array-form query parameter of the listing, export and stats is a 400 naming it, never ignored', async () => {
    for (const [path, param] of [
      ['/api/v1/audit-events/export?from[]=1', 'from[]'],
      ['/api/v1/audit-events/export?from=2024-01-01T00:00:00Z&fromm=2024-02-01T00:00:00Z', 'fromm'],
      ['/api/v1/audit-events?limit=10&serverId[]=srv-1', 'serverId[]'],
      ['/api/v1/audit-events?limit=10&sessionid=s-1', 'sessionid'],
      ['/api/v1/audit-events/stats?window[]=24h', 'window[]'],
    ]) {
      const r = await http(`${app.url}${path}`, { headers: bearer(org.key) });
      expect({ path, status: r.status }).toEqual({ path, status: 400 });
      expect(r.body, path).toEqual(error('invalid_query', 'query is invalid', param));
      expect(r.body.issues.find((i: { path: string }) => i.path === param).message).toBe('is not a parameter of this route');
    }
    // A repeated parameter is an array where one value is expected: also a 400 naming it.
    const twice = await http(`${app.url}/api/v1/audit-events/export?from=2024-01-01T00:00:00Z&from=2025-01-01T00:00:00Z`, { headers: bearer(org.key) });
    expect(twice.body).toEqual(error('invalid_query', 'query is invalid', 'from'));
  });

  it('a path segment longer than the router takes is a 414 in the service\'s error shape', async () => {
    // A 1,100-character session id: past the 1,024 characters a path parameter may have.
    const r = await http(`${app.url}/api/v1/sessions/${'s'.repeat(1100)}`, { headers: bearer(org.key) });
    expect(r.status).toBe(414);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body).toEqual({ statusCode: 414, error: 'URI Too Long', code: 'uri_too_long', message: 'a path segment is longer than 1024 characters' });
    // One of 1,000 characters is read and answered by the route.
    expect((await http(`${app.url}/api/v1/sessions/${'s'.repeat(1000)}`, { headers: bearer(org.key) })).status).toBe(404);
  });

  it('credentials are checked before the request is validated', async () => {
    expect((await http(`${app.url}/api/v1/audit-events?limit=abc`)).status).toBe(401);
    expect((await http(`${app.url}/api/v1/admin/api-keys/not-a-uuid`, { method: 'DELETE' })).status).toBe(401);
  });
});
