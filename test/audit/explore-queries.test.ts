// The explore view's queries: free text over the raw message (bounded by a time range), counts of a query, and export of a query.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames, realBackendAvailable } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, send, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

interface Item { seq: number; serverId: string | null; toolName: string | null; action: string | null; metadata: Record<string, unknown> }

const HOUR = 3_600_000;
const T0 = Date.parse('2024-05-01T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe.each(backendNames)('explore queries (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', AUDIT_COUNT_MAX: '25', SEARCH_MAX_RANGE_HOURS: '6' }, {}, { inject: true });
  let org: TestOrg;
  const get = (path: string) => http(`${app.url}${path}`, { headers: bearer(org.key) });
  const range = `from=${iso(T0 - HOUR)}&to=${iso(T0 + 2 * HOUR)}`;

  beforeAll(async () => {
    org = await createOrg(app.url);
    const calls = Array.from({ length: 40 }, (_, i) =>
      toolCall(i, { serverId: i % 4 === 0 ? 'github-mcp' : 'files-mcp', action: i % 5 === 0 ? 'deny' : 'allow', toolName: `tool_${i % 3}`, timestamp: iso(T0 + i * 1000), metadata: { note: `call ${i} 100%_done` }, id: `explore-${i}` }),
    );
    expect((await postEvents(app.url, org.key, calls)).status).toBe(200);
    const cw = await http(`${app.url}/api/v1/ingest/cloudwatch`, {
      method: 'POST',
      headers: bearer(org.key),
      json: {
        logGroup: '/aws/lambda/mcp-gateway-eu',
        logStream: '2024/05/01/[$LATEST]4f6a9c1e',
        events: [
          { message: 'tool=exec_sql action=blocked server=mcp-postgres session=sess-42 latency_ms=4 reason="drop table customers"', timestamp: iso(T0 + 60_000) },
          { message: 'healthcheck ok', timestamp: iso(T0 + 61_000) },
        ],
      },
    });
    expect(cw.status).toBe(200);
  });

  it('free text finds words of the raw message and of the log group, every word required, wildcards taken literally', async () => {
    const words = async (q: string) => (await get(`/api/v1/audit-events?q=${encodeURIComponent(q)}&${range}`)).body.items as Item[];
    const sql = await words('drop table');
    expect(sql.map((e) => e.toolName)).toEqual(['exec_sql']);
    expect(sql[0].metadata.message).toContain('drop table customers');
    expect((await words('mcp-gateway-eu')).length).toBe(2); // both entries of the log group (shared batch metadata)
    expect((await words('mcp-gateway-eu healthcheck')).map((e) => e.metadata.message)).toEqual(['healthcheck ok']);
    expect((await words('drop nothing-like-this')).length).toBe(0);
    expect((await words('100%_done')).length).toBe(40);
    expect((await words('100%x')).length).toBe(0);
    // With field filters: github-mcp calls denied whose metadata says "call 2..."
    const combined = (await get(`/api/v1/audit-events?q=${encodeURIComponent('call 2')}&serverId=github-mcp&action=deny&${range}`)).body.items as Item[];
    expect(combined.map((e) => e.metadata.note)).toEqual(['call 20 100%_done']);
  });

  it('free text needs from and to within SEARCH_MAX_RANGE_HOURS: 400 naming the problem', async () => {
    const none = await get('/api/v1/audit-events?q=drop');
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ code: 'invalid_query', issues: [{ path: 'from' }] });
    expect(none.body.issues[0].message).toMatch(/SEARCH_MAX_RANGE_HOURS/);
    const wide = await get(`/api/v1/audit-events?q=drop&from=${iso(T0)}&to=${iso(T0 + 6 * HOUR + 1)}`);
    expect(wide.status).toBe(400);
    expect(wide.body.issues[0]).toMatchObject({ path: 'to' });
    expect((await get(`/api/v1/audit-events?q=drop&from=${iso(T0)}&to=${iso(T0 + 6 * HOUR)}`)).status).toBe(200);
    expect((await get(`/api/v1/audit-events/count?q=drop`)).status).toBe(400);
    expect((await get(`/api/v1/audit-events/export?q=drop`)).status).toBe(400);
    expect((await get(`/api/v1/audit-events?q=a+b+c+d+e+f&${range}`)).status).toBe(400);
  });

  it('counts the matches of a query as the listing finds them, capped at AUDIT_COUNT_MAX', async () => {
    const listed = async (q: string) => ((await get(`/api/v1/audit-events?limit=1000&${q}`)).body.items as Item[]).length;
    for (const q of ['serverId=github-mcp', 'action=deny', 'serverId=github-mcp&action=deny', 'source=cloudwatch', `q=healthcheck&${range}`, `type=log&${range}`, 'serverId=nobody']) {
      const c = await get(`/api/v1/audit-events/count?${q}`);
      expect(c.status, q).toBe(200);
      expect(c.body, q).toEqual({ count: await listed(q), capped: false, asOfSeq: expect.any(Number) });
    }
    // More matches than AUDIT_COUNT_MAX (25 here): the cap, and capped: true.
    const all = await get('/api/v1/audit-events/count');
    expect(all.body).toMatchObject({ count: 25, capped: true });
    expect(all.body.asOfSeq).toBeGreaterThanOrEqual(42);
  });

  it('exports exactly the listing of a query, as NDJSON', async () => {
    for (const q of ['serverId=github-mcp&action=deny', `source=cloudwatch&${range}`, `q=${encodeURIComponent('call 1')}&${range}`]) {
      const res = await send(`${app.url}/api/v1/audit-events/export?${q}`, { headers: bearer(org.key) });
      expect(res.status, q).toBe(200);
      const lines = (await res.text()).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Item);
      const listed = ((await get(`/api/v1/audit-events?limit=1000&order=asc&${q}`)).body.items as Item[]).map((e) => e.seq);
      expect(lines.map((e) => e.seq), q).toEqual(listed);
      expect(lines.length, q).toBeGreaterThan(0);
    }
  });
});

describe.runIf(realBackendAvailable)('free text past SEARCH_QUERY_TIMEOUT_MS (real)', () => {
  const { app } = suiteApp('real', { ANOMALY_MIN_RATE: '1000000000', SEARCH_QUERY_TIMEOUT_MS: '1' });

  it('answers 503 search_timeout with Retry-After instead of running on', async () => {
    const org = await createOrg(app.url);
    const now = Date.now();
    for (let b = 0; b < 4; b++) {
      const batch = Array.from({ length: 5000 }, (_, i) => toolCall(i, { timestamp: iso(now - (b * 5000 + i) * 100), metadata: { message: `line ${i} of a long log message that free text has to read through` } }));
      expect((await postEvents(app.url, org.key, batch)).status).toBe(200);
    }
    const r = await http(`${app.url}/api/v1/audit-events?q=never-there&from=${iso(now - 3 * HOUR)}&to=${iso(now + 1000)}`, { headers: bearer(org.key) });
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('search_timeout');
    expect(r.headers.get('retry-after')).toBe('5');
    const c = await http(`${app.url}/api/v1/audit-events/count?from=${iso(now - 3 * HOUR)}&to=${iso(now + 1000)}&q=never-there`, { headers: bearer(org.key) });
    expect(c.status).toBe(503);
    expect(c.body.code).toBe('count_timeout');
  });
});
