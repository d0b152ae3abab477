// Organizations' own recognition profiles through the API: a profile changes what an unknown format yields (version
// named on each event), then is removed; every instance sees a change at once; the test endpoint stores nothing;
// hostile profiles (huge, too many nodes, too costly, erroring, too many) are bounded and never fail a request.
import { beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, http, login, startApp, type Json, type TestOrg } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';
import { ingestedEvents } from '../ingest/ingest-kit.js';

const LINE = '{"op":"run","thing":"search_web","sess":"s-1","ms":12,"verdict_code":"N"}';

const runnerProfile = {
  id: 'acme-runner',
  description: 'ACME runner lines',
  source: 'https://example.com/acme-runner',
  when: "source == 'cloudwatch' && 'thing' in attributes",
  fields: { tool: 'attributes.thing', session: 'attributes.sess', latencyMs: 'attributes.ms', action: "attributes.verdict_code == 'N' ? 'deny' : 'allow'", actionWord: 'attributes.verdict_code' },
};

describe.each(backendNames)('recognition profiles API (%s backend)', (backendName) => {
  const { app, backend } = suiteApp(backendName, {
    RECOGNITION_MAX_PROFILES_PER_ORG: '3',
    RECOGNITION_MAX_EXPRESSION_CHARS: '500',
    RECOGNITION_MAX_EXPRESSION_NODES: '60',
    RECOGNITION_MAX_COST_PER_RECORD: '6000',
    RECOGNITION_UNRECOGNIZED_MAX_NAMES: '3',
    RECOGNITION_UNRECOGNIZED_SAMPLE_BYTES: '64',
    BODY_LIMIT_BYTES: '65536',
  });
  let org: TestOrg;
  let cookie: string;

  beforeAll(async () => {
    org = await createOrg(app.url);
    cookie = await login(app.url, org.email, org.password);
  });

  const asAdmin = (base: string, path: string, init: RequestInit & { json?: unknown } = {}): Promise<Json> =>
    http(`${base}${path}`, { ...init, headers: { cookie, origin: base, ...(init.headers as Record<string, string>) } });
  const sendLine = (base: string, key: string, message: string, logGroup = '/acme/runner') =>
    http(`${base}/api/v1/ingest/cloudwatch`, { method: 'POST', headers: bearer(key), json: { logGroup, logStream: 's', events: [{ message, timestamp: Date.now() }] } });

  it('a profile turns an unknown format into tool calls, names itself and its version, and is removed', async () => {
    expect((await sendLine(app.url, org.key, LINE)).status).toBe(200);
    let added = await asAdmin(app.url, '/api/v1/recognition/profiles', { method: 'POST', json: runnerProfile });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ id: 'acme-runner', version: 1 });
    expect((await sendLine(app.url, org.key, LINE)).status).toBe(200);
    // Replaced: the next version reads the next record.
    added = await asAdmin(app.url, '/api/v1/recognition/profiles', { method: 'POST', json: { ...runnerProfile, fields: { ...runnerProfile.fields, action: "'allow'" } } });
    expect(added.status).toBe(200);
    expect(added.body.version).toBe(2);
    expect((await sendLine(app.url, org.key, LINE)).status).toBe(200);
    const listed = await http(`${app.url}/api/v1/recognition/profiles`, { headers: bearer(org.key) });
    expect(listed.body.items.map((p: { id: string; version: number }) => [p.id, p.version])).toEqual([['acme-runner', 2]]);
    expect(listed.body.builtin.map((p: { id: string }) => p.id)).toEqual(['claude-code', 'codex-cli', 'gemini-cli', 'vercel-ai-sdk', 'openinference-tool']);
    expect((await asAdmin(app.url, '/api/v1/recognition/profiles/acme-runner', { method: 'DELETE' })).status).toBe(204);
    expect((await asAdmin(app.url, '/api/v1/recognition/profiles/acme-runner', { method: 'DELETE' })).status).toBe(404);
    expect((await sendLine(app.url, org.key, LINE)).status).toBe(200);

    const stored = await ingestedEvents(app.url, org.key);
    expect(stored.map((e) => [e.type, e.toolName, e.action, e.sessionId, e.latencyMs, e.metadata.actionWord ?? null, e.metadata.recognition ?? null])).toEqual([
      ['log', null, null, null, null, null, null],
      ['tool_call', 'search_web', 'deny', 's-1', 12, 'N', { profile: 'acme-runner', version: 1 }],
      ['tool_call', 'search_web', 'allow', 's-1', 12, 'N', { profile: 'acme-runner', version: 2 }],
      ['log', null, null, null, null, null, null],
    ]);
  });

  it('only organization admins change profiles', async () => {
    const member = await createOrg(app.url, { role: 'member' });
    const memberCookie = await login(app.url, member.email, member.password);
    const r = await http(`${app.url}/api/v1/recognition/profiles`, { method: 'POST', headers: { cookie: memberCookie, origin: app.url }, json: runnerProfile });
    expect(r.status).toBe(403);
    const byKey = await http(`${app.url}/api/v1/recognition/profiles`, { method: 'POST', headers: bearer(member.key), json: runnerProfile });
    expect(byKey.status).toBe(403);
  });

  it('the test endpoint answers what would be stored and which profile read it, storing nothing', async () => {
    const fresh = await createOrg(app.url);
    const freshCookie = await login(app.url, fresh.email, fresh.password);
    const before = await ingestedEvents(app.url, fresh.key);
    const r = await http(`${app.url}/api/v1/recognition/test`, {
      method: 'POST',
      headers: { cookie: freshCookie, origin: app.url },
      json: { source: 'line', sample: LINE, logGroup: '/acme/runner', profiles: [runnerProfile] },
    });
    expect(r.status).toBe(200);
    expect(r.body.events).toHaveLength(1);
    expect(r.body.events[0]).toMatchObject({ type: 'tool_call', toolName: 'search_web', action: 'deny', sessionId: 's-1', latencyMs: 12, profile: { id: 'acme-runner', version: 1 } });
    const unknown = await http(`${app.url}/api/v1/recognition/test`, { method: 'POST', headers: bearer(fresh.key), json: { source: 'datadog', sample: { id: 'dd-1', title: 'Nightly job', body: 'done' } } });
    expect(unknown.status).toBe(200);
    expect(unknown.body.events[0]).toMatchObject({ type: 'log', profile: null });
    expect(unknown.body.unrecognized).toEqual([{ source: 'datadog', name: 'Nightly job', count: 1, sample: 'done' }]);
    expect(await ingestedEvents(app.url, fresh.key)).toEqual(before);
    expect((await http(`${app.url}/api/v1/recognition/unrecognized`, { headers: bearer(fresh.key) })).body.items).toEqual([]);
  });

  it('the test endpoint takes at most BODY_LIMIT_BYTES and RECOGNITION_MAX_PROFILES_PER_ORG drafts', async () => {
    const big = await http(`${app.url}/api/v1/recognition/test`, { method: 'POST', headers: bearer(org.key), json: { source: 'line', sample: 'x'.repeat(70_000) } });
    expect(big.status).toBe(413);
    const drafts = ['a', 'b', 'c', 'd'].map((id) => ({ ...runnerProfile, id }));
    const many = await http(`${app.url}/api/v1/recognition/test`, { method: 'POST', headers: bearer(org.key), json: { source: 'line', sample: LINE, profiles: drafts } });
    expect(many.status).toBe(400);
    expect(many.body.message).toMatch(/RECOGNITION_MAX_PROFILES_PER_ORG/);
  });

  it('a raw event is read by a profile too (its whole object as attributes), and never counted unrecognized', async () => {
    const fresh = await createOrg(app.url);
    const freshCookie = await login(app.url, fresh.email, fresh.password);
    const profile = { id: 'raw-ticket', when: "source == 'raw' && 'metadata' in attributes && 'ticket' in attributes.metadata", fields: { session: 'attributes.metadata.ticket' } };
    expect((await http(`${app.url}/api/v1/recognition/profiles`, { method: 'POST', headers: { cookie: freshCookie, origin: app.url }, json: profile })).status).toBe(201);
    const sent = await http(`${app.url}/api/v1/ingest/events`, { method: 'POST', headers: bearer(fresh.key), json: [{ serverId: 'srv', toolName: 'search', metadata: { ticket: 'T-7' } }, { serverId: 'srv', toolName: 'fetch' }] });
    expect(sent.status).toBe(200);
    const stored = await ingestedEvents(app.url, fresh.key);
    expect(stored.map((e) => [e.toolName, e.sessionId, e.metadata.recognition ?? null])).toEqual([
      ['search', 'T-7', { profile: 'raw-ticket', version: 1 }],
      ['fetch', null, null],
    ]);
    expect((await http(`${app.url}/api/v1/recognition/unrecognized`, { headers: bearer(fresh.key) })).body.items).toEqual([]);
  });

  it('refuses a profile over the expression size, node or cost bounds, and more profiles than allowed', async () => {
    const post = (json: unknown) => asAdmin(app.url, '/api/v1/recognition/profiles', { method: 'POST', json });
    const huge = await post({ ...runnerProfile, id: 'huge', when: `'${'a'.repeat(600)}' == ''` });
    expect(huge.status).toBe(400);
    expect(huge.body.issues[0]).toMatchObject({ path: '(body).when', message: 'when: longer than 500 characters' });
    const nodes = await post({ ...runnerProfile, id: 'nodes', fields: { tool: Array.from({ length: 40 }, (_, i) => `'${i}'`).join(' + ') } });
    expect(nodes.status).toBe(400);
    expect(nodes.body.message).toMatch(/fields\.tool: more than 60 nodes/);
    const costly = await post({ ...runnerProfile, id: 'costly', when: "attributes.all(k, k != 'x') && attributes.exists(k, k == 'y')" });
    expect(costly.status).toBe(400);
    expect(costly.body.message).toMatch(/more than RECOGNITION_MAX_COST_PER_RECORD \(6000\)/);
    const broken = await post({ ...runnerProfile, id: 'broken', when: 'attributes.' });
    expect(broken.status).toBe(400);

    const other = await createOrg(app.url);
    const otherCookie = await login(app.url, other.email, other.password);
    const add = (id: string) => http(`${app.url}/api/v1/recognition/profiles`, { method: 'POST', headers: { cookie: otherCookie, origin: app.url }, json: { ...runnerProfile, id } });
    for (const id of ['p1', 'p2', 'p3']) expect((await add(id)).status).toBe(201);
    const fourth = await add('p4');
    expect(fourth.status).toBe(409);
    expect(fourth.body.message).toMatch(/RECOGNITION_MAX_PROFILES_PER_ORG/);
    // Replacing one at the limit is allowed.
    expect((await add('p2')).status).toBe(200);
  });

  it('an erroring profile never fails the request (the record falls through); profiles past the cost budget are skipped', async () => {
    const erroring = { ...runnerProfile, id: 'erroring', when: "attributes.nope == 'x'" };
    // One comprehension over the attributes: within the budget of 6000 alone, not two of them.
    const scanning = (id: string, when: string) => ({ ...runnerProfile, id, when });
    const r = await http(`${app.url}/api/v1/recognition/test`, {
      method: 'POST',
      headers: bearer(org.key),
      json: {
        source: 'line',
        sample: LINE,
        useStored: false,
        profiles: [scanning('scan-error', "attributes.nope == 'x' || attributes.exists(k, k == 'x')"), scanning('scan', "attributes.exists(k, k == 'nothing')"), { ...runnerProfile, id: 'late' }],
      },
    });
    expect(r.status).toBe(200);
    // The erroring one fails, the second is evaluated, the budget is spent before `late`: the generic reading stores a log.
    expect(r.body.events[0]).toMatchObject({ type: 'log', profile: null });
    expect(r.body.failures).toBe(2);
    const alone = await http(`${app.url}/api/v1/recognition/test`, { method: 'POST', headers: bearer(org.key), json: { source: 'line', sample: LINE, useStored: false, profiles: [scanning('scan', "attributes.exists(k, k == 'nothing')"), { ...runnerProfile, id: 'late' }] } });
    expect(alone.body.events[0]).toMatchObject({ type: 'tool_call', profile: { id: 'late', version: 1 } });
    expect(alone.body.failures).toBe(0);
    // Through ingest: the erroring profile is stored and skipped record by record; the request is stored.
    const fresh = await createOrg(app.url);
    const freshCookie = await login(app.url, fresh.email, fresh.password);
    expect((await http(`${app.url}/api/v1/recognition/profiles`, { method: 'POST', headers: { cookie: freshCookie, origin: app.url }, json: erroring })).status).toBe(201);
    expect((await sendLine(app.url, fresh.key, '{"tool":"search","action":"deny"}')).status).toBe(200);
    const stored = await ingestedEvents(app.url, fresh.key);
    expect(stored.map((e) => [e.type, e.toolName, e.action])).toEqual([['tool_call', 'search', 'deny']]);
  });

  it('counts unrecognized records by source and name with one bounded sample, at most RECOGNITION_UNRECOGNIZED_MAX_NAMES names', async () => {
    const fresh = await createOrg(app.url);
    for (const group of ['/a', '/b', '/a', '/c', '/d', '/e']) expect((await sendLine(app.url, fresh.key, `plain text ${'é'.repeat(100)}`, group)).status).toBe(200);
    const r = await http(`${app.url}/api/v1/recognition/unrecognized`, { headers: bearer(fresh.key) });
    expect(r.status).toBe(200);
    const rows = r.body.items as { source: string; name: string; count: number; sample: string }[];
    expect(rows.map((x) => [x.source, x.name, x.count])).toEqual([
      ['cloudwatch', '(other)', 2],
      ['cloudwatch', '/a', 2],
      ['cloudwatch', '/b', 1],
      ['cloudwatch', '/c', 1],
    ]);
    for (const row of rows) expect(Buffer.byteLength(row.sample)).toBeLessThanOrEqual(64);
    expect(rows[0].sample.startsWith('plain text é')).toBe(true);
  });

  if (backendName === 'real') {
    it('a change reaches every instance at once over the control channel', async () => {
      const other = await startApp({ ...(await backend.sibling()) });
      try {
        const fresh = await createOrg(app.url);
        const freshCookie = await login(app.url, fresh.email, fresh.password);
        // The other instance reads (and caches) the organization's profiles: none yet.
        expect((await sendLine(other.url, fresh.key, LINE)).status).toBe(200);
        const heard = new Promise<void>((resolve) => other.ctx.bus.control.on('recognition_profiles_changed', (m) => m.orgId === fresh.id && resolve()));
        expect((await http(`${app.url}/api/v1/recognition/profiles`, { method: 'POST', headers: { cookie: freshCookie, origin: app.url }, json: runnerProfile })).status).toBe(201);
        await heard;
        expect((await sendLine(other.url, fresh.key, LINE)).status).toBe(200);
        const stored = await ingestedEvents(app.url, fresh.key);
        expect(stored.map((e) => [e.type, e.metadata.recognition ?? null])).toEqual([
          ['log', null],
          ['tool_call', { profile: 'acme-runner', version: 1 }],
        ]);
      } finally {
        await other.close();
      }
    });
  }
});
