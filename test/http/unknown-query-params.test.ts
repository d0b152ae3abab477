// A query parameter an API route does not take is a 400 naming it (?server=x used to be ignored and list everything).
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

describe.each(backendNames)('unknown query parameters (%s)', (backendName) => {
  const { app } = suiteApp(backendName, {}, {}, { inject: true });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
    expect((await postEvents(app.url, org.key, [toolCall(1, { serverId: 'github-mcp' }), toolCall(2, { serverId: 'files-mcp' })])).status).toBe(200);
  });

  it('GET /api/v1/audit-events?server=x answers 400 naming the parameter and what the route takes', async () => {
    const r = await http(`${app.url}/api/v1/audit-events?server=github-mcp`, { headers: bearer(org.key) });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ statusCode: 400, error: 'Bad Request', code: 'invalid_query', message: 'query is invalid', issues: [{ path: 'server', message: 'is not a parameter of this route' }] });
    // The declared name still filters.
    const ok = await http(`${app.url}/api/v1/audit-events?serverId=github-mcp`, { headers: bearer(org.key) });
    expect(ok.status).toBe(200);
    expect(ok.body.items.map((e: { serverId: string }) => e.serverId)).toEqual(['github-mcp']);
  });

  it('names every unknown parameter as an issue, on every API route that reads a query, and on routes that take none', async () => {
    const cases = [
      '/api/v1/audit-events?serverid=a&tool=b&limit=5',
      '/api/v1/audit-events/stats?window=1h&range=2h',
      '/api/v1/audit-events/export?from=2020-01-01T00:00:00Z&format=csv',
      '/api/v1/sessions?state=active',
      '/api/v1/events?server=github-mcp',
      '/api/v1/anomaly-settings?verbose=1',
      '/api/v1/auth/me?x=1',
    ];
    for (const path of cases) {
      const r = await http(`${app.url}${path}`, { headers: bearer(org.key) });
      expect(r.status, path).toBe(400);
      expect(r.body.code, path).toBe('invalid_query');
      const known = new Set(['limit', 'window', 'from', 'serverId']);
      const unknown = [...new URL(`http://x${path}`).searchParams.keys()].filter((k) => !known.has(k));
      expect(r.body.issues, path).toEqual(unknown.map((name) => ({ path: name, message: 'is not a parameter of this route' })));
    }
  });

  it('ingest routes ignore a parameter: forwarders drop a 4xx without retrying', async () => {
    const r = await http(`${app.url}/api/v1/ingest/events?source=gateway`, { method: 'POST', headers: bearer(org.key), json: toolCall(3) });
    expect(r.status).toBe(200);
    expect(r.body.accepted).toBe(1);
  });
});
