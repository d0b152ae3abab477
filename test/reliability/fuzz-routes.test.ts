// Fuzzing every public route (fast-check): hostile bodies, headers, query strings, paths and content types never give a 5xx,
// never crash the server, never leave a half-done change behind, and /readyz answers 200 afterwards.
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, bearer, createOrg, http, login, postEvents, startApp, toolCall, type RunningApp, type TestOrg } from '../helpers/app.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { bodyLike, nastyBody, nastyNumber, nastyQuery, nastyString, nastyValue, rawHttp, type RawBody } from './hostile.js';
import { LogAudit } from './log-audit.js';
import { loadOtlpTypes } from '../../src/ingest/otlp/proto-types.js';
import { redisPrefix } from './processes.js';

const LIMIT = 256 * 1024;
const MAX_ENTRIES = 200;
const FOREIGN = 'http://evil.example';
const DASHBOARD = 'http://dash.example:8080';

interface Req {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: RawBody;
}

interface Answer {
  status: number | 'network-error';
  contentType: string;
  text: string;
  error?: string;
}

describe.runIf(realBackendAvailable)('every public route under hostile input', () => {
  const audit = new LogAudit('fuzz-routes');
  let db: { url: string; drop(): Promise<void> };
  let sql: pg.Client;
  let app: RunningApp;
  let org: TestOrg;
  let other: TestOrg;
  let readOnlyKey: string;
  let cookie: string;
  const throwawayKeyIds: string[] = [];
  const throwawayCookies: string[] = [];
  const stats = new Map<string, Map<string, number>>();

  beforeAll(async () => {
    db = await createTestDatabase();
    app = await startApp({
      DATABASE_URL: db.url,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      REDIS_PREFIX: redisPrefix('fuzz'),
      BODY_LIMIT_BYTES: String(LIMIT),
      INGEST_MAX_ENTRIES: String(MAX_ENTRIES),
      CORS_ORIGINS: DASHBOARD,
      // Debug logging: the log audit then sees as much as the service can write.
      LOG_LEVEL: 'debug',
      // No asynchronous anomaly events between a request and the state check after it.
      ANOMALY_MIN_RATE: '1000000000',
      SSE_HEARTBEAT_MS: '60000',
    });
    audit.app('app', app);
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
    org = await createOrg(app.url);
    other = await createOrg(app.url);
    audit.org(org);
    audit.org(other);
    cookie = await login(app.url, org.email, org.password);
    audit.cookie(cookie);
    for (let i = 0; i < 5; i++) {
      const c = await login(app.url, org.email, org.password);
      audit.cookie(c);
      throwawayCookies.push(c);
    }
    const ro = await http(`${app.url}/api/v1/admin/organizations/${org.id}/api-keys`, { method: 'POST', headers: bearer(ADMIN_TOKEN), json: { name: 'read only', scopes: ['events:read'] } });
    readOnlyKey = ro.body.key;
    audit.secret('read-only key', readOnlyKey);
    for (let i = 0; i < 10; i++) {
      const k = await http(`${app.url}/api/v1/admin/organizations/${org.id}/api-keys`, { method: 'POST', headers: bearer(ADMIN_TOKEN), json: { name: `victim ${i}` } });
      audit.secret('throwaway key', k.body.key);
      throwawayKeyIds.push(k.body.id);
    }
    expect((await postEvents(app.url, org.key, [toolCall(1, { sessionId: 'sess-1' }), toolCall(2, { sessionId: 'sess-2' })])).status).toBe(200);
  });

  afterAll(async () => {
    await sql?.end();
    await app?.close();
    await db?.drop();
    const lines = [...stats].map(([route, m]) => `  ${route}: ${[...m].map(([s, n]) => `${s}×${n}`).join(' ')}`);
    console.log(`fuzz status counts:\n${lines.join('\n')}`);
    audit.assertClean();
  });

  /** Everything a request could change, minus what merely reading with a key touches (last_used_at). */
  async function digest(): Promise<Record<string, unknown>> {
    const r = await sql.query(`SELECT
      (SELECT count(*) FROM organizations) AS orgs,
      (SELECT count(*) FROM users) AS users,
      (SELECT count(*) FROM memberships) AS memberships,
      (SELECT count(*) FROM api_keys) AS keys,
      (SELECT count(*) FROM api_keys WHERE revoked_at IS NOT NULL) AS revoked,
      (SELECT md5(coalesce(string_agg(id::text || ':' || coalesce(active_org_id::text, '-'), ',' ORDER BY id), '')) FROM login_sessions) AS logins,
      (SELECT count(*) FROM audit_events) AS events,
      (SELECT count(*) FROM audit_events WHERE type = 'tool_call') AS tool_calls,
      (SELECT md5(coalesce(string_agg(id::text || name || event_seq || anomaly_settings::text, ',' ORDER BY id), '')) FROM organizations) AS org_rows,
      (SELECT md5(coalesce(string_agg(org_id::text || session_id || status || tool_call_count, ',' ORDER BY org_id, session_id), '')) FROM agent_sessions) AS sessions,
      (SELECT count(*) FROM servers) AS servers`);
    return r.rows[0] as Record<string, unknown>;
  }

  function headersFor(kind: string): Record<string, string> {
    switch (kind) {
      case 'key':
        return bearer(org.key);
      case 'read-only key':
        return bearer(readOnlyKey);
      case 'cookie':
        return { cookie };
      case 'cookie + own origin':
        return { cookie, origin: app.url };
      case 'cookie + dashboard origin':
        return { cookie, origin: DASHBOARD };
      case 'cookie + foreign origin':
        return { cookie, origin: FOREIGN };
      case 'admin token':
        return bearer(ADMIN_TOKEN);
      default:
        return {};
    }
  }

  /** Header values fetch can send (no NUL/CR/LF, bytes only). */
  const headerSafe = (s: string) => s.replace(/[^\x20-\x7e\x80-\xff]/g, '').slice(0, 2000);

  /** Credentials: mostly those that get the route past authentication (`best`), also every other kind, and garbage. */
  const credentials = (...best: string[]): fc.Arbitrary<[string, Record<string, string>]> =>
    fc.oneof(
      { arbitrary: fc.constantFrom(...(best.length ? best : ['key'])).map((k): [string, Record<string, string>] => [k, headersFor(k)]), weight: 6 },
      { arbitrary: fc.constantFrom('key', 'read-only key', 'cookie', 'cookie + own origin', 'cookie + dashboard origin', 'cookie + foreign origin', 'admin token', 'none').map((k): [string, Record<string, string>] => [k, headersFor(k)]), weight: 3 },
      {
        arbitrary: fc
          .tuple(fc.constantFrom('Bearer ', 'bearer  ', 'Basic ', 'Bearer ask_', '', 'Token '), nastyString, fc.option(nastyString.map((s) => `audit_stream_session=${s}`)), fc.option(nastyString))
          .map(([scheme, v, c, o]): [string, Record<string, string>] => {
            const h: Record<string, string> = { authorization: headerSafe(scheme + v) };
            if (c !== null) h.cookie = headerSafe(c);
            if (o !== null) h.origin = headerSafe(o);
            return ['garbage', h];
          }),
        weight: 2,
      },
    );

  /** Extra headers anyone may send: Last-Event-ID, request ids, forwarding headers, Accept, Range... */
  const extraHeaders = fc.dictionary(
    fc.constantFrom('last-event-id', 'x-request-id', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'accept', 'accept-encoding', 'range', 'if-none-match', 'x-amz-firehose-access-key', 'host'),
    nastyString.map(headerSafe),
    { maxKeys: 2 },
  );

  const segment = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd')).slice(0, 3000);
  const idSegment = (real: string[]) => fc.oneof({ arbitrary: fc.constantFrom(...real), weight: 2 }, { arbitrary: fc.uuid(), weight: 1 }, { arbitrary: nastyString.map(segment), weight: 2 }, { arbitrary: fc.constantFrom('%00', '%ZZ', '%C0%80', '..', '%2e%2e', '%2F'), weight: 1 });

  async function send(req: Req): Promise<Answer> {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body?.contentType) headers['content-type'] = req.body.contentType;
    if (req.body?.contentEncoding) headers['content-encoding'] = req.body.contentEncoding;
    const ctrl = new AbortController();
    const timer = setTimeout(() => ctrl.abort(), 30_000);
    try {
      const res = await fetch(`${app.url}${req.path}`, { method: req.method, headers, body: req.body ? new Uint8Array(req.body.bytes) : undefined, signal: ctrl.signal, redirect: 'manual' });
      const contentType = res.headers.get('content-type') ?? '';
      if (contentType.startsWith('text/event-stream')) {
        ctrl.abort();
        return { status: res.status, contentType, text: '' };
      }
      return { status: res.status, contentType, text: await res.text() };
    } catch (err) {
      return { status: 'network-error', contentType: '', text: '', error: String((err as Error).cause ?? err) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends one request and checks the answer and the state around it. */
  async function check(route: string, req: Req, ingest = false): Promise<void> {
    const before = await digest();
    const a = await send(req);
    const what = `${req.method} ${req.path.slice(0, 300)} ${JSON.stringify(req.headers).slice(0, 300)} ${req.body?.what.slice(0, 300) ?? ''}`;
    const counts = stats.get(route) ?? new Map<string, number>();
    counts.set(String(a.status), (counts.get(String(a.status)) ?? 0) + 1);
    stats.set(route, counts);
    if (a.status === 'network-error') {
      // Only a body over the limit may be cut off (the 413 goes out before the rest is read); the server lives on.
      expect((req.body?.bytes.length ?? 0) > LIMIT, `${what}: ${a.error}`).toBe(true);
      expect((await http(`${app.url}/healthz`)).status).toBe(200);
      return;
    }
    expect(a.status, `${what} -> ${a.text.slice(0, 300)}`).toBeLessThan(500);
    if (a.status >= 400) {
      // 431 (headers too large) comes from Node's HTTP parser, before the app: no JSON body there.
      if (a.status === 431) return;
      expect(a.contentType, what).toContain('application/json');
      const body = JSON.parse(a.text) as Record<string, unknown>;
      expect(body, what).toMatchObject({ statusCode: a.status, error: expect.any(String), message: expect.any(String), code: expect.any(String) });
    }
    const after = await digest();
    if (a.status >= 300 || req.method === 'GET') {
      expect(after, `${what} -> ${a.status} changed state`).toEqual(before);
    } else if (ingest) {
      const accepted = (JSON.parse(a.text) as { accepted: number }).accepted;
      expect(Number(after.tool_calls) - Number(before.tool_calls), `${what}: stored exactly what it accepted`).toBe(accepted);
    }
  }

  /** Run counts are per route family; RUNS scales them all (about 4,500 requests in all at 3, under two minutes). */
  const RUNS = 3;
  const run = (prop: fc.IAsyncPropertyWithHooks<[Req]> | fc.IAsyncProperty<[Req]>, numRuns: number) => fc.assert(prop, { numRuns: numRuns * RUNS, endOnFailure: true });

  it('auth: login, logout, me, active organization', async () => {
    const origin = fc.constantFrom<string | null>(null, app.url, DASHBOARD, FOREIGN, 'null');
    const withOrigin = (h: Record<string, string>, o: string | null) => (o === null ? h : { ...h, origin: o });
    const login = fc
      .tuple(nastyBody(bodyLike({ email: fc.oneof(fc.constant(org.email), fc.constant(org.email.toUpperCase()), nastyString), password: fc.oneof(fc.constant(org.password), nastyString) }), LIMIT), origin, extraHeaders)
      .map(([body, o, extra]): Req => ({ method: 'POST', path: '/api/v1/auth/login', headers: withOrigin(extra, o), body }));
    await run(fc.asyncProperty(login, (r) => check('POST /auth/login', r)), 150);

    const logout = fc
      .tuple(fc.oneof(fc.constantFrom(...throwawayCookies), nastyString.map((s) => headerSafe(`audit_stream_session=${s}`))), fc.constantFrom<string | null>(null, FOREIGN, 'null'), fc.option(nastyBody(nastyValue, LIMIT)))
      .map(([c, o, body]): Req => ({ method: 'POST', path: '/api/v1/auth/logout', headers: withOrigin({ cookie: c }, o), body: body ?? undefined }));
    await run(fc.asyncProperty(logout, (r) => check('POST /auth/logout', r)), 60);

    const me = fc.tuple(credentials('key', 'cookie'), nastyQuery(['x']), extraHeaders).map(([[, h], q, extra]): Req => ({ method: 'GET', path: `/api/v1/auth/me${q}`, headers: { ...extra, ...h } }));
    await run(fc.asyncProperty(me, (r) => check('GET /auth/me', r)), 60);

    const active = fc
      .tuple(credentials('cookie + own origin', 'cookie + dashboard origin'), nastyBody(bodyLike({ organizationId: fc.oneof(fc.constantFrom(org.id, other.id), fc.uuid(), nastyString) }), LIMIT))
      .map(([[, h], body]): Req => ({ method: 'PUT', path: '/api/v1/auth/active-organization', headers: h, body }));
    await run(fc.asyncProperty(active, (r) => check('PUT /auth/active-organization', r)), 100);
  });

  it('admin API: organizations, users, keys, revocation', async () => {
    const scopes = fc.oneof(fc.array(fc.constantFrom('events:read', 'ingest:write', 'sessions:write', 'org:admin', 'admin', '*', ''), { maxLength: 5 }), nastyValue);
    const orgId = idSegment([org.id, other.id]);
    const cases = fc.oneof(
      fc.tuple(credentials('admin token'), nastyBody(bodyLike({ name: nastyString }), LIMIT)).map(([[, h], body]): Req => ({ method: 'POST', path: '/api/v1/admin/organizations', headers: h, body })),
      fc
        .tuple(credentials('admin token'), orgId, nastyBody(bodyLike({ email: fc.oneof(nastyString, fc.emailAddress()), password: nastyString, role: fc.oneof(fc.constantFrom('admin', 'member', 'owner', 'ADMIN'), nastyValue) }), LIMIT))
        .map(([[, h], id, body]): Req => ({ method: 'POST', path: `/api/v1/admin/organizations/${id}/users`, headers: h, body })),
      fc.tuple(credentials('admin token'), orgId, nastyBody(bodyLike({ name: nastyString, scopes }), LIMIT)).map(([[, h], id, body]): Req => ({ method: 'POST', path: `/api/v1/admin/organizations/${id}/api-keys`, headers: h, body })),
      fc.tuple(credentials('admin token'), idSegment(throwawayKeyIds.slice(0, 5)), fc.option(nastyBody(nastyValue, LIMIT))).map(([[, h], id, body]): Req => ({ method: 'DELETE', path: `/api/v1/admin/api-keys/${id}`, headers: h, body: body ?? undefined })),
    );
    await run(fc.asyncProperty(cases, (r) => check(`${r.method} /admin`, r)), 250);
  });

  it("organization API keys (an org admin's cookie)", async () => {
    const cases = fc.oneof(
      fc.tuple(credentials('cookie'), nastyQuery(['limit'])).map(([[, h], q]): Req => ({ method: 'GET', path: `/api/v1/api-keys${q}`, headers: h })),
      fc
        .tuple(credentials('cookie + own origin', 'cookie + dashboard origin'), nastyBody(bodyLike({ name: nastyString, scopes: fc.oneof(fc.array(fc.constantFrom('events:read', 'ingest:write', 'sessions:write', 'org:admin'), { maxLength: 4 }), nastyValue) }), LIMIT))
        .map(([[, h], body]): Req => ({ method: 'POST', path: '/api/v1/api-keys', headers: h, body })),
      fc.tuple(credentials('cookie + own origin'), idSegment(throwawayKeyIds.slice(5))).map(([[, h], id]): Req => ({ method: 'DELETE', path: `/api/v1/api-keys/${id}`, headers: h })),
    );
    await run(fc.asyncProperty(cases, (r) => check(`${r.method} /api-keys`, r)), 150);
  });

  it('audit events query', async () => {
    const q = fc
      .tuple(credentials('key', 'cookie'), nastyQuery(['type', 'serverId', 'sessionId', 'toolName', 'action', 'source', 'from', 'to', 'cursor', 'order', 'limit']))
      .map(([[, h], query]): Req => ({ method: 'GET', path: `/api/v1/audit-events${query}`, headers: h }));
    await run(fc.asyncProperty(q, (r) => check('GET /audit-events', r)), 200);
  });

  it('audit event stats query', async () => {
    const q = fc
      .tuple(credentials('key', 'cookie'), nastyQuery(['window']))
      .map(([[, h], query]): Req => ({ method: 'GET', path: `/api/v1/audit-events/stats${query}`, headers: h }));
    await run(fc.asyncProperty(q, (r) => check('GET /audit-events/stats', r)), 100);
  });

  it('sessions: list, read, suspend, resume', async () => {
    const cursor = fc.oneof(nastyString, fc.constantFrom(Buffer.from('["2024-01-01T00:00:00Z","x"]').toString('base64url'), Buffer.from('["+275760-09-13T00:00:00.000Z","x"]').toString('base64url'), Buffer.from('[1,2]').toString('base64url'), Buffer.from('{"__proto__":1}').toString('base64url')));
    const list = fc
      .tuple(credentials('key', 'cookie'), nastyQuery(['status', 'serverId', 'limit', 'cursor']), fc.option(cursor))
      .map(([[, h], q, c]): Req => ({ method: 'GET', path: `/api/v1/sessions${q}${c === null ? '' : `${q ? '&' : '?'}cursor=${segment(c)}`}`, headers: h }));
    const sessionId = idSegment(['sess-1', 'sess-2']);
    const read = fc.tuple(credentials('key', 'cookie'), sessionId).map(([[, h], id]): Req => ({ method: 'GET', path: `/api/v1/sessions/${id}`, headers: h }));
    const transition = fc
      .tuple(credentials('key', 'cookie + own origin'), sessionId, fc.constantFrom('suspend', 'resume'), fc.option(nastyBody(bodyLike({ reason: nastyString }), LIMIT)))
      .map(([[, h], id, t, body]): Req => ({ method: 'POST', path: `/api/v1/sessions/${id}/${t}`, headers: h, body: body ?? undefined }));
    await run(fc.asyncProperty(fc.oneof(list, read, transition), (r) => check(`${r.method} /sessions`, r)), 250);
  });

  it('anomaly settings', async () => {
    const num = fc.oneof(nastyNumber, fc.integer({ min: 0, max: 100_000 }), fc.constant(null));
    const put = fc
      .tuple(credentials('key', 'cookie + own origin'), nastyBody(bodyLike({ windowSeconds: num, minRate: num, multiplier: num, cooldownSeconds: num, suspendSessionsOnSpike: fc.oneof(fc.boolean(), fc.constant(null), nastyValue) }), LIMIT))
      .map(([[, h], body]): Req => ({ method: 'PUT', path: '/api/v1/anomaly-settings', headers: h, body }));
    const get = fc.tuple(credentials('key', 'cookie'), nastyQuery(['x'])).map(([[, h], q]): Req => ({ method: 'GET', path: `/api/v1/anomaly-settings${q}`, headers: h }));
    await run(fc.asyncProperty(fc.oneof(put, get), (r) => check(`${r.method} /anomaly-settings`, r)), 150);
  });

  it('event stream: query, Last-Event-ID and other headers', async () => {
    const lastEventId = fc.oneof(nastyString.map(headerSafe), fc.constantFrom('0', '1', '-1', '1.5', '99999999999999999999', ' 2 ', '0x10', '1e3'));
    const stream = fc
      .tuple(credentials('key', 'cookie'), nastyQuery(['types', 'serverId', 'lastEventId']), fc.option(lastEventId), extraHeaders)
      .map(([[, h], q, id, extra]): Req => ({ method: 'GET', path: `/api/v1/events${q}`, headers: { ...extra, ...h, ...(id === null ? {} : { 'last-event-id': id }) } }));
    await run(fc.asyncProperty(stream, (r) => check('GET /events', r)), 150);
  });

  it('raw ingest: bodies, NDJSON, content types and encodings; a request is stored whole or not at all', async () => {
    const event = bodyLike({
      id: fc.oneof(fc.string({ maxLength: 20 }).map((s) => `${s}-${randomBytes(4).toString('hex')}`), nastyValue),
      type: fc.constantFrom('tool_call', 'anomaly', 'log'),
      serverId: nastyString,
      sessionId: nastyString,
      toolName: nastyString,
      action: nastyString,
      latencyMs: nastyNumber,
      timestamp: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), nastyString, nastyNumber),
      metadata: nastyValue,
    });
    const shaped = fc.oneof(event, fc.array(event, { maxLength: 5 }), fc.array(event, { minLength: MAX_ENTRIES - 1, maxLength: MAX_ENTRIES + 2 }));
    const ndjson = fc.array(fc.oneof(event.map((e) => JSON.stringify(e)), nastyString), { maxLength: 6 }).map((lines): RawBody => ({ bytes: new Uint8Array(Buffer.from(lines.join('\n'))), contentType: 'application/x-ndjson', contentEncoding: null, what: `ndjson ${lines.join('\\n').slice(0, 200)}` }));
    const auth = fc.oneof({ arbitrary: fc.constant(bearer(org.key)), weight: 5 }, { arbitrary: credentials().map(([, h]) => h), weight: 1 });
    // Idempotency-Key: absent, fresh, or hostile (made unique, so no request replays another: stored = accepted holds).
    const idempotency = fc.option(fc.oneof(fc.constant(''), nastyString.map(headerSafe)).map((k) => ({ 'idempotency-key': `${k}${randomBytes(4).toString('hex')}` })), { nil: {} });
    const req = fc
      .tuple(auth, idempotency, fc.oneof({ arbitrary: nastyBody(shaped, LIMIT), weight: 4 }, { arbitrary: ndjson, weight: 1 }))
      .map(([h, k, body]): Req => ({ method: 'POST', path: '/api/v1/ingest/events', headers: { ...h, ...k }, body }));
    await run(fc.asyncProperty(req, (r) => check('POST /ingest/events', r, true)), 250);
  });

  it('Firehose: empty, junk and multi-payload records, hostile headers, keys in the wrong header; answers in Firehose shape, refusals change nothing', async () => {
    const b64 = (b: string | Buffer) => Buffer.from(b).toString('base64');
    const payload = (n: number) =>
      JSON.stringify({ messageType: 'DATA_MESSAGE', logGroup: 'fuzz/g', logStream: 's', logEvents: Array.from({ length: n }, (_, i) => ({ id: randomBytes(8).toString('hex'), timestamp: 1714558800000, message: `tool=f${i}` })) });
    const members = fc.array(fc.tuple(fc.nat({ max: 3 }), fc.boolean(), fc.constantFrom('', '\n', ' ')), { minLength: 1, maxLength: 4 }).map((ms) =>
      b64(Buffer.concat(ms.flatMap(([n, corrupt, sep]) => {
        const g = Buffer.from(gzipSync(payload(n)));
        if (corrupt) g[Math.floor(g.length / 2)] ^= 0xff;
        return [g, Buffer.from(sep)];
      }))),
    );
    const data = fc.oneof(
      fc.constantFrom('', '   ', 'IA==', 'not base64!', b64(gzipSync(''))),
      nastyString.map((t) => b64(t)),
      nastyString,
      members,
      fc.array(fc.oneof(nastyString, fc.nat({ max: 2 }).map(payload)), { maxLength: 4 }).map((lines) => b64(gzipSync(lines.join('\n')))),
    );
    const record = fc.oneof({ arbitrary: data.map((d) => ({ data: d })), weight: 6 }, { arbitrary: nastyValue, weight: 1 });
    const body = fc.record({
      requestId: fc.option(fc.oneof(fc.uuid(), nastyString), { nil: undefined }),
      timestamp: fc.option(fc.oneof(nastyNumber, nastyString, fc.constant(Date.now())), { nil: undefined }),
      records: fc.oneof({ arbitrary: fc.array(record, { maxLength: 6 }), weight: 6 }, { arbitrary: nastyValue, weight: 1 }),
    });
    const key = fc.oneof(
      { arbitrary: fc.constant<Record<string, string>>({ 'x-amz-firehose-access-key': org.key }), weight: 6 },
      { arbitrary: fc.constantFrom<Record<string, string>>(bearer(org.key), {}, { 'x-amz-firehose-access-key': 'ask_wrong' }, { 'x-amz-firehose-access-key': readOnlyKey }), weight: 2 },
    );
    const attributes = fc.oneof(nastyString, fc.dictionary(nastyString, nastyString, { maxKeys: 30 }).map((d) => JSON.stringify({ commonAttributes: d })));
    const extra = fc.record(
      { 'x-amz-firehose-request-id': nastyString, 'x-amz-firehose-source-arn': fc.oneof(nastyString, fc.constant('arn:aws:firehose:us-east-1:1:deliverystream/x')), 'x-amz-firehose-common-attributes': attributes },
      { requiredKeys: [] },
    );
    const prop = fc.asyncProperty(body, key, extra, fc.boolean(), async (b, k, x, gzip) => {
      const text = JSON.stringify(b) ?? 'null';
      const headers: Record<string, string> = { 'content-type': 'application/json', ...k, ...Object.fromEntries(Object.entries(x).map(([h, v]) => [h, headerSafe(String(v))])) };
      if (gzip) headers['content-encoding'] = 'gzip';
      const before = await digest();
      const res = await fetch(`${app.url}/api/v1/ingest/firehose`, { method: 'POST', headers, body: gzip ? new Uint8Array(gzipSync(text)) : text });
      const answer = (await res.json()) as Record<string, unknown>;
      const what = `${JSON.stringify(headers).slice(0, 300)} ${text.slice(0, 300)}`;
      const counts = stats.get('POST /ingest/firehose') ?? new Map<string, number>();
      counts.set(String(res.status), (counts.get(String(res.status)) ?? 0) + 1);
      stats.set('POST /ingest/firehose', counts);
      expect(res.status, what).toBeLessThan(500);
      expect(Object.keys(answer).sort(), what).toEqual(res.status === 200 ? ['requestId', 'timestamp'] : ['errorMessage', 'requestId', 'timestamp']);
      if (res.status !== 200) expect(await digest(), `${what} -> ${res.status} changed state`).toEqual(before);
    });
    await fc.assert(prop, { numRuns: 80 * RUNS, endOnFailure: true });
  });

  it('OTLP traces and logs: hostile protobuf (mutated, truncated, random), OTLP/JSON, gzip bombs and other types get OTLP answers; refusals change nothing', async () => {
    const types = loadOtlpTypes();
    const PROTO = 'application/x-protobuf';
    const anyValue: fc.Arbitrary<Record<string, unknown>> = fc.letrec<{ v: Record<string, unknown> }>((tie) => ({
      v: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        nastyString.map((x) => ({ stringValue: x })),
        fc.boolean().map((x) => ({ boolValue: x })),
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((x) => ({ intValue: x.toString() })),
        fc.double().map((x) => ({ doubleValue: x })),
        fc.uint8Array({ maxLength: 16 }).map((x) => ({ bytesValue: Buffer.from(x).toString('base64') })),
        fc.array(tie('v'), { maxLength: 3 }).map((values) => ({ arrayValue: { values } })),
        fc.array(fc.record({ key: nastyString, value: tie('v') }), { maxLength: 3 }).map((values) => ({ kvlistValue: { values } })),
      ),
    })).v;
    const toolKeys = fc.constantFrom('mcp.method.name', 'gen_ai.operation.name', 'gen_ai.tool.name', 'mcp.session.id', 'server.address', 'server.port', 'audit.action', 'traceloop.span.kind', 'service.name');
    const attributes = fc.array(
      fc.oneof(
        fc.record({ key: toolKeys, value: fc.oneof(fc.constantFrom('tools/call', 'execute_tool', 'tool', 'deny').map((x) => ({ stringValue: x })), anyValue) }),
        fc.record({ key: nastyString, value: anyValue }),
      ),
      { maxLength: 6 },
    );
    const id = (n: number) => fc.oneof({ arbitrary: fc.uint8Array({ minLength: n, maxLength: n }), weight: 4 }, { arbitrary: fc.uint8Array({ maxLength: 20 }), weight: 1 }).map((b) => Buffer.from(b).toString('base64'));
    const nanos = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String), fc.constant('1772359200000000000'));
    const span = fc.record({ traceId: id(16), spanId: id(8), name: nastyString, kind: fc.integer({ min: -1, max: 9 }), startTimeUnixNano: nanos, endTimeUnixNano: nanos, attributes, status: fc.record({ code: fc.integer({ min: 0, max: 5 }), message: nastyString }) });
    const logRecord = fc.record({ traceId: id(16), spanId: id(8), timeUnixNano: nanos, severityNumber: fc.integer({ min: 0, max: 30 }), severityText: nastyString, body: anyValue, attributes });
    const resource = fc.record({ attributes });
    const traces = fc.array(fc.record({ resource, scopeSpans: fc.array(fc.record({ spans: fc.array(span, { maxLength: 4 }) }), { maxLength: 2 }) }), { maxLength: 2 }).map((resourceSpans) => ({ resourceSpans }));
    const logs = fc.array(fc.record({ resource, scopeLogs: fc.array(fc.record({ logRecords: fc.array(logRecord, { maxLength: 4 }) }), { maxLength: 2 }) }), { maxLength: 2 }).map((resourceLogs) => ({ resourceLogs }));
    /** OTLP/JSON of an export: base64 ids rewritten as hex, as the JSON mapping sends them. */
    const asJson = (v: unknown): string => JSON.stringify(v, (k, x) => (['traceId', 'spanId'].includes(k) && typeof x === 'string' ? Buffer.from(x, 'base64').toString('hex') : x));
    const mutate = fc.constantFrom<'none' | 'flip' | 'truncate' | 'append'>('none', 'none', 'flip', 'truncate', 'append');
    const body = fc.oneof(
      { arbitrary: fc.tuple(fc.constantFrom('traces' as const, 'logs' as const), fc.boolean(), mutate, fc.nat(), fc.boolean()), weight: 4 },
      { arbitrary: fc.tuple(fc.constant('other' as const), fc.boolean(), mutate, fc.nat(), fc.boolean()), weight: 1 },
    );
    const prop = fc.asyncProperty(body, traces, logs, nastyBody(nastyValue, LIMIT), fc.constantFrom(PROTO, 'application/json', 'application/json; charset=utf-8', 'text/plain', 'application/grpc'), async ([signal, json, how, at, gzip], t, l, other, otherType) => {
      const path = `/api/v1/ingest/otlp/v1/${signal === 'logs' ? 'logs' : 'traces'}`;
      let bytes: Buffer;
      let contentType: string;
      let contentEncoding: string | null = null;
      if (signal === 'other') {
        bytes = Buffer.from(other.bytes);
        contentType = otherType;
        contentEncoding = other.contentEncoding;
      } else {
        const type = signal === 'traces' ? types.traceRequest : types.logsRequest;
        const value = signal === 'traces' ? t : l;
        bytes = json ? Buffer.from(asJson(value)) : Buffer.from(type.encode(type.fromObject(value)).finish());
        contentType = json ? 'application/json' : PROTO;
        if (how === 'flip' && bytes.length) bytes[at % bytes.length] ^= 0xa5;
        if (how === 'truncate') bytes = bytes.subarray(0, at % (bytes.length + 1));
        if (how === 'append') bytes = Buffer.concat([bytes, Buffer.from([0x0a, 0xff, 0x01])]);
        if (gzip) {
          bytes = gzipSync(bytes);
          contentEncoding = 'gzip';
        }
      }
      const headers: Record<string, string> = { ...bearer(org.key), 'content-type': contentType };
      if (contentEncoding) headers['content-encoding'] = contentEncoding;
      const before = await digest();
      const res = await fetch(`${app.url}${path}`, { method: 'POST', headers, body: new Uint8Array(bytes) });
      const answer = Buffer.from(await res.arrayBuffer());
      const what = `${path} ${contentType} ${contentEncoding ?? ''} ${how} ${bytes.subarray(0, 120).toString('hex')}`;
      const counts = stats.get('POST /ingest/otlp') ?? new Map<string, number>();
      counts.set(String(res.status), (counts.get(String(res.status)) ?? 0) + 1);
      stats.set('POST /ingest/otlp', counts);
      expect(res.status, what).toBeLessThan(500);
      // The answer is in the request's encoding: JSON for JSON requests, protobuf for everything else.
      const jsonAnswer = contentType.startsWith('application/json');
      expect(res.headers.get('content-type'), what).toContain(jsonAnswer ? 'application/json' : PROTO);
      const decoded = (type: typeof types.status) => (jsonAnswer ? JSON.parse(answer.toString('utf8')) : type.toObject(type.decode(answer)));
      if (res.status === 200) decoded(signal === 'logs' ? types.logsResponse : types.traceResponse);
      else {
        expect(decoded(types.status), what).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
        expect(await digest(), `${what} -> ${res.status} changed state`).toEqual(before);
      }
    });
    await fc.assert(prop, { numRuns: 100 * RUNS, endOnFailure: true });
  });

  it('health, metrics, OpenAPI, the dashboard and unknown paths', async () => {
    const paths = fc.oneof(
      fc.constantFrom('/healthz', '/readyz', '/metrics', '/openapi.json', '/', '/index.html', '/assets/', '/api/v1/', '/api/v2/events', '/api/v1/ingest/unknown'),
      nastyString.map((s) => `/${segment(s)}`),
      fc.constantFrom('/..%2f..%2f..%2fetc%2fpasswd', '/%2e%2e/%2e%2e/package.json', '/assets/..%5c..%5cpackage.json', '/.env', '/%00', '//', '/api/v1/events/..', `/${'a/'.repeat(500)}`),
    );
    const method = fc.constantFrom('GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH');
    const req = fc.tuple(method, paths, nastyQuery(['x', 'name']), credentials(), extraHeaders).map(([m, p, q, [, h], extra]): Req => ({ method: m, path: `${p}${q}`, headers: { ...extra, ...h } }));
    await run(
      fc.asyncProperty(req, async (r) => {
        const a = await send(r);
        expect(a.status, `${r.method} ${r.path} -> ${a.text.slice(0, 200)}`).not.toBe('network-error');
        expect(a.status as number, `${r.method} ${r.path} -> ${a.text.slice(0, 200)}`).toBeLessThan(500);
        // Nothing outside the built dashboard is ever served (no traversal to package.json or .env).
        expect(a.text).not.toContain('"devDependencies"');
      }),
      200,
    );
  });

  it('bytes fetch refuses to send: invalid UTF-8 and control bytes in paths and headers, broken framing', async () => {
    const port = Number(new URL(app.url).port);
    const route = fc.constantFrom('/api/v1/audit-events', '/api/v1/sessions/sess-1', '/api/v1/auth/login', '/api/v1/ingest/events', '/api/v1/anomaly-settings', '/api/v1/events', '/readyz');
    const bytes = fc.uint8Array({ minLength: 1, maxLength: 40 });
    const where = fc.constantFrom('path', 'query', 'header value', 'header name', 'authorization', 'cookie', 'content-length', 'chunked');
    await fc.assert(
      fc.asyncProperty(route, bytes, where, async (path, b, at) => {
        const junk = Buffer.from(b);
        const parts: Buffer[] = [];
        const line = (s: string | Buffer) => parts.push(Buffer.isBuffer(s) ? s : Buffer.from(s, 'latin1'), Buffer.from('\r\n'));
        const method = path.includes('ingest') || path.includes('login') ? 'POST' : 'GET';
        line(Buffer.concat([Buffer.from(`${method} ${path}`), at === 'path' ? junk : Buffer.alloc(0), at === 'query' ? Buffer.concat([Buffer.from('?serverId='), junk]) : Buffer.alloc(0), Buffer.from(' HTTP/1.1')]));
        line('Host: 127.0.0.1');
        line('Connection: close');
        line(at === 'authorization' ? Buffer.concat([Buffer.from('Authorization: Bearer '), junk]) : `Authorization: Bearer ${org.key}`);
        if (at === 'cookie') line(Buffer.concat([Buffer.from('Cookie: audit_stream_session='), junk]));
        if (at === 'header value') line(Buffer.concat([Buffer.from('Last-Event-ID: '), junk]));
        if (at === 'header name') line(Buffer.concat([junk, Buffer.from(': x')]));
        const body = Buffer.from('[{"serverId":"s","toolName":"t"}]');
        if (method === 'POST') line('Content-Type: application/json');
        if (at === 'chunked') {
          line('Transfer-Encoding: chunked');
          line('');
          parts.push(Buffer.from(`${junk.toString('hex').slice(0, 6)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n'));
        } else if (at === 'content-length') {
          line(`Content-Length: ${junk[0] * 1000}`);
          line('');
          parts.push(body);
        } else {
          line(`Content-Length: ${method === 'POST' ? body.length : 0}`);
          line('');
          if (method === 'POST') parts.push(body);
        }
        const before = await digest();
        // A body shorter than its Content-Length is waited for; the client gives up (closes) after a while.
        const answer = await rawHttp(port, Buffer.concat(parts), 800).catch(() => null);
        if (answer) expect(answer.status, `${at} ${junk.toString('hex')} -> ${answer.head.split('\r\n')[0]}`).toBeLessThan(500);
        if (!answer || answer.status >= 300) expect(await digest()).toEqual(before);
      }),
      { numRuns: 120 },
    );
    expect((await http(`${app.url}/healthz`)).status).toBe(200);
  });

  it('is ready afterwards, and still serves and stores normally', async () => {
    expect((await http(`${app.url}/readyz`)).status).toBe(200);
    const r = await postEvents(app.url, org.key, [toolCall(99, { sessionId: 'after-fuzz' })]);
    expect(r.body).toEqual({ accepted: 1, duplicates: 0 });
    const page = await http(`${app.url}/api/v1/audit-events?limit=5`, { headers: bearer(org.key) });
    expect(page.status).toBe(200);
    expect(page.body.items[0].sessionId).toBe('after-fuzz');
  });
});
