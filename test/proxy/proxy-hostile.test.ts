// Hostile and oversized input at the proxy: malformed JSON-RPC, header/body mismatches (2026-07-28), a body over the
// limit, huge arguments, batches, a stuck or unreachable upstream, and every per-key, per-session and per-org bound.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, http, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { connectClient } from './mcp-clients.js';
import { startLegacyUpstream, startModernUpstream, type Upstream } from './mcp-upstreams.js';
import { addRule, clearRules, PROXY_ENV, proxyCalls, proxyOrg, registerServer } from './proxy-helpers.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };

function modernCall(name: string, args: Record<string, unknown>, id: number | string = 1) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: META } };
}

function modernHeaders(key: string, method = 'tools/call', name?: string): Record<string, string> {
  return { ...bearer(key), accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(name ? { 'mcp-name': name } : {}) };
}

describe('hostile input at the MCP proxy (embedded backend)', () => {
  const { app } = suiteApp('embedded', {
    ...PROXY_ENV,
    PROXY_MAX_BODY_BYTES: String(64 * 1024),
    PROXY_STORED_ARGUMENTS_BYTES: '256',
    PROXY_MAX_CALLS_PER_SESSION: '2',
    PROXY_MAX_STREAMS_PER_KEY: '1',
    PROXY_MAX_SERVERS_PER_ORG: '3',
    PROXY_MAX_RULES_PER_ORG: '2',
    PROXY_RULE_MAX_CHARS: '200',
    PROXY_RULE_MAX_NODES: '20',
  });
  let modern: Upstream;
  let legacy: Upstream;
  let org: TestOrg;
  const url = (id = 'm') => `${app.url}/mcp/${id}`;

  beforeAll(async () => {
    modern = await startModernUpstream();
    legacy = await startLegacyUpstream();
    org = await proxyOrg(app.url);
    await registerServer(app.url, org, 'm', modern.url, { timeoutMs: 1500 });
    await registerServer(app.url, org, 'l', legacy.url);
  });
  afterAll(async () => {
    await modern?.close();
    await legacy?.close();
  });

  it('answers malformed JSON and non-JSON-RPC bodies with JSON-RPC errors, forwarding nothing', async () => {
    const before = modern.requests.length;
    const cases: [string, number, number][] = [
      ['{"jsonrpc":', 400, -32700],
      ['[]', 400, -32600],
      ['{"hello":"world"}', 400, -32600],
      ['{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}', 400, -32600],
      ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}', 400, -32602],
      ['{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1,2]}}', 400, -32602],
    ];
    for (const [body, status, code] of cases) {
      const r = await http(url('l'), { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
      expect(r.status, body).toBe(status);
      expect(r.body.error.code, body).toBe(code);
      expect(r.body.jsonrpc).toBe('2.0');
    }
    const wrongType = await http(url('l'), { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'text/plain' }, body: 'hi' });
    expect(wrongType.status).toBe(415);
    expect(wrongType.body.error).toBeDefined();
    expect(modern.requests.length).toBe(before);
  });

  it('refuses 2026-07-28 requests whose Mcp-Method or Mcp-Name headers disagree with the body, or lack them (-32020)', async () => {
    const before = modern.control.calls.length;
    const send = (headers: Record<string, string>, body: unknown) => http(url(), { method: 'POST', headers, json: body });
    const mismatchName = await send(modernHeaders(org.key, 'tools/call', 'fail'), modernCall('echo', { text: 'x' }, 7));
    expect(mismatchName.status).toBe(400);
    expect(mismatchName.body).toMatchObject({ id: 7, error: { code: -32020 } });
    expect(mismatchName.body.error.message).toMatch(/Mcp-Name/);
    const mismatchMethod = await send(modernHeaders(org.key, 'tools/list', 'echo'), modernCall('echo', {}));
    expect(mismatchMethod.body.error.code).toBe(-32020);
    const missingName = await send(modernHeaders(org.key, 'tools/call'), modernCall('echo', {}));
    expect(missingName.body.error.code).toBe(-32020);
    const { 'mcp-method': _m, ...noMethod } = modernHeaders(org.key, 'tools/call', 'echo');
    expect((await send(noMethod, modernCall('echo', {}))).body.error.code).toBe(-32020);
    // A base64-sentinel name matching the body passes.
    const encoded = await send(modernHeaders(org.key, 'tools/call', `=?base64?${Buffer.from('echo').toString('base64')}?=`), modernCall('echo', { text: 'ok' }));
    expect(encoded.status).toBe(200);
    expect(modern.control.calls.length).toBe(before + 1);
  });

  it('forwards arguments holding text Postgres cannot store (NUL, a lone surrogate) as sent, and records them with replacement characters', async () => {
    const before = modern.control.calls.length;
    const r = await http(url(), { method: 'POST', headers: { ...modernHeaders(org.key, 'tools/call', 'echo'), 'content-type': 'application/json' }, body: JSON.stringify(modernCall('echo', { text: 'a\u0000b\ud800c' }, 3)) });
    expect(r.status).toBe(200);
    expect(modern.control.calls.length).toBe(before + 1);
    expect(modern.control.calls[before].args).toEqual({ text: 'a\u0000b\ud800c' });
    await app.ctx.proxy.recorder.idle();
    const [rec] = (await proxyCalls(app.url, org)).filter((c) => c.metadata.proxy.jsonrpcId === 3);
    expect(rec.metadata.arguments.text).toBe('a\ufffdb\ufffdc');
  });

  it('refuses a tools/call inside a batch', async () => {
    const r = await http(url('l'), { method: 'POST', headers: { ...bearer(org.key), accept: 'application/json, text/event-stream' }, json: [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo' } }] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/batch/);
  });

  it('refuses a body over PROXY_MAX_BODY_BYTES (413) and stores huge arguments bounded, with their size', async () => {
    const tooBig = await http(url(), { method: 'POST', headers: modernHeaders(org.key, 'tools/call', 'echo'), json: modernCall('echo', { blob: 'x'.repeat(70 * 1024) }) });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error).toBeDefined();
    const client = await connectClient('modern', url(), org.key);
    const blob = 'y'.repeat(30 * 1024);
    const r = await client.callTool('echo', { blob }, { meta: { 'io.audit-stream/sessionId': 'huge' } });
    expect(r.isError).toBeFalsy();
    await app.ctx.proxy.recorder.idle();
    const [call] = await proxyCalls(app.url, org, { sessionId: 'huge' });
    expect(call.metadata.argumentsTruncated).toBe(true);
    expect(Buffer.byteLength(call.metadata.argumentsText)).toBeLessThanOrEqual(256);
    expect(call.metadata.arguments).toBeUndefined();
    expect(call.metadata.proxy.argumentsBytes).toBe(JSON.stringify({ blob }).length);
    await client.close();
  });

  it('a stuck upstream times out (the client gets an error, the record says timeout) without holding other calls', async () => {
    const client = await connectClient('modern', url(), org.key);
    const started = new Promise((r) => modern.control.hangStarted.push(r));
    const stuck = client.callTool('hang', {}, { meta: { 'io.audit-stream/sessionId': 'stuck' } }).then(
      (v) => v,
      (e: Error) => e,
    );
    await started;
    // Meanwhile another call of the same key goes through at once.
    expect((await client.callTool('echo', { text: 'meanwhile' }, { meta: { 'io.audit-stream/sessionId': 'other' } })).isError).toBeFalsy();
    const out = await stuck;
    expect(JSON.stringify(out instanceof Error ? out.message : out)).toMatch(/-32003|did not answer within 1500 ms/);
    await app.ctx.proxy.recorder.idle();
    const [call] = await proxyCalls(app.url, org, { sessionId: 'stuck' });
    expect(call.metadata.proxy.outcome).toBe('timeout');
    await client.close();
  });

  it('bounds tool calls in flight per session (429, JSON-RPC error) and gives the slots back', async () => {
    const client = await connectClient('modern', url(), org.key);
    const meta = { 'io.audit-stream/sessionId': 'busy' };
    const starts = [new Promise((r) => modern.control.hangStarted.push(r))];
    const first = client.callTool('hang', {}, { meta }).catch((e: Error) => e);
    await starts[0];
    const second = new Promise((r) => modern.control.hangStarted.push(r));
    const two = client.callTool('hang', {}, { meta }).catch((e: Error) => e);
    await second;
    const third = await client.callTool('echo', { text: 'x' }, { meta }).catch((e: Error) => e);
    expect(String((third as Error).message)).toMatch(/-32004|PROXY_MAX_CALLS_PER_SESSION/);
    for (const r of modern.control.releaseHang.splice(0)) r();
    await Promise.all([first, two]);
    expect((await client.callTool('echo', { text: 'after' }, { meta })).isError).toBeFalsy();
    await client.close();
  });

  it('bounds long-lived streams per key (GET streams of 2025-11-25 sessions)', async () => {
    const c = await connectClient('legacy', url('l'), org.key);
    // The SDK client holds one GET stream open already: a second one of the same key is refused.
    const r = await fetch(url('l'), { headers: { ...bearer(org.key), accept: 'text/event-stream', 'mcp-session-id': c.sessionId()!, 'mcp-protocol-version': '2025-11-25' } });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBeTruthy();
    await r.body?.cancel();
    await c.close();
  });

  it('a revoked key is refused at once, although key checks are reused for PROXY_AUTH_CACHE_MS', async () => {
    const made = await http(`${app.url}/api/v1/admin/organizations/${org.id}/api-keys`, { method: 'POST', headers: { authorization: 'Bearer test-admin-token-0123456789' }, json: { name: 'agent', scopes: ['mcp:call'] } });
    const client = await connectClient('modern', url(), made.body.key);
    expect((await client.callTool('echo', { text: 'before' })).isError).toBeFalsy();
    expect((await http(`${app.url}/api/v1/admin/api-keys/${made.body.id}`, { method: 'DELETE', headers: { authorization: 'Bearer test-admin-token-0123456789' } })).status).toBe(204);
    const err = await client.callTool('echo', { text: 'after' }).catch((e: Error) => e);
    expect(String((err as Error).message)).toMatch(/401|revoked/);
    await client.close().catch(() => undefined);
  });

  it('answers an unreachable upstream with 502 and records the call as such', async () => {
    await registerServer(app.url, org, 'gone', 'http://127.0.0.1:1/mcp');
    const r = await http(url('gone'), { method: 'POST', headers: modernHeaders(org.key, 'tools/call', 'echo'), json: modernCall('echo', { text: 'x' }) });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe(-32002);
    await app.ctx.proxy.recorder.idle();
    const calls = (await proxyCalls(app.url, org)).filter((c) => c.serverId === 'gone');
    expect(calls.map((c) => c.metadata.proxy.outcome)).toEqual(['upstream_unreachable']);
    expect((await http(`${app.url}/api/v1/mcp/servers/gone`, { method: 'DELETE', headers: bearer(org.key) })).status).toBe(204);
  });

  it('bounds servers and rules per organization, rule size, and refuses unsafe registrations', async () => {
    await registerServer(app.url, org, 'third', modern.url);
    const fourth = await http(`${app.url}/api/v1/mcp/servers/fourth`, { method: 'PUT', headers: bearer(org.key), json: { url: modern.url } });
    expect(fourth.status).toBe(409);
    await clearRules(app.url, org);
    await addRule(app.url, org, { name: 'a', condition: 'true', action: 'allow' });
    await addRule(app.url, org, { name: 'b', condition: 'false', action: 'deny' });
    const third = await http(`${app.url}/api/v1/mcp/rules`, { method: 'POST', headers: bearer(org.key), json: { name: 'c', condition: 'true', action: 'flag' } });
    expect(third.status).toBe(409);
    await clearRules(app.url, org);
    const long = await http(`${app.url}/api/v1/mcp/rules`, { method: 'POST', headers: bearer(org.key), json: { name: 'long', condition: `tool.name == "${'x'.repeat(300)}"`, action: 'deny' } });
    expect(long.status).toBe(400);
    const wide = await http(`${app.url}/api/v1/mcp/rules`, { method: 'POST', headers: bearer(org.key), json: { name: 'wide', condition: Array.from({ length: 8 }, (_, i) => `a.b${i}==1`).join('||'), action: 'deny' } });
    expect(wide.status).toBe(400);
    expect(wide.body.message).toMatch(/PROXY_RULE_MAX_NODES/);
    const bad = await http(`${app.url}/api/v1/mcp/rules`, { method: 'POST', headers: bearer(org.key), json: { name: 'bad', condition: 'tool.name ==', action: 'deny' } });
    expect(bad.status).toBe(400);
    for (const body of [{ url: 'ftp://example.com/mcp' }, { url: 'http://user:pw@example.com/mcp' }, { url: modern.url, headers: [{ name: 'Host', value: 'x' }] }, { url: modern.url, headers: [{ name: 'X-A', value: 'a\r\nb' }] }]) {
      const r = await http(`${app.url}/api/v1/mcp/servers/third`, { method: 'PUT', headers: bearer(org.key), json: body });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
  });

  it('dry-runs the stored rules and given ones, rule by rule, without forwarding or storing anything', async () => {
    await clearRules(app.url, org);
    await addRule(app.url, org, { name: 'errs', condition: 'args.missing == 1', action: 'deny' });
    await addRule(app.url, org, { name: 'rm', condition: 'tool.name == "rm"', action: 'deny', reason: 'no deleting' });
    const before = (await proxyCalls(app.url, org)).length;
    const r = await http(`${app.url}/api/v1/mcp/rules/dry-run`, { method: 'POST', headers: bearer(org.key), json: { call: { serverId: 'm', toolName: 'rm', arguments: {} } } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ action: 'deny', reason: 'no deleting', rule: { name: 'rm' } });
    expect(r.body.rules.map((x: { matched: boolean; error: string | null }) => [x.matched, x.error !== null])).toEqual([
      [false, true],
      [true, false],
    ]);
    const given = await http(`${app.url}/api/v1/mcp/rules/dry-run`, {
      method: 'POST',
      headers: bearer(org.key),
      json: { call: { serverId: 'm', toolName: 'rm', arguments: { path: '/tmp' } }, rules: [{ name: 'tmp ok', condition: 'args.path.startsWith("/tmp")', action: 'flag' }] },
    });
    expect(given.body).toMatchObject({ action: 'flag', rule: { name: 'tmp ok' } });
    expect((await proxyCalls(app.url, org)).length).toBe(before);
    await clearRules(app.url, org);
  });
});

describe('upstream addresses (embedded backend, private upstreams not allowed)', () => {
  const { app } = suiteApp('embedded', { ...PROXY_ENV, PROXY_ALLOW_PRIVATE_UPSTREAMS: 'false' });

  it('refuses to register, or to connect to, loopback and private addresses', async () => {
    const org = await proxyOrg(app.url);
    for (const u of ['http://127.0.0.1:5432/mcp', 'http://localhost/mcp', 'http://[::1]/mcp', 'http://169.254.169.254/latest', 'http://10.1.2.3/mcp']) {
      const r = await http(`${app.url}/api/v1/mcp/servers/x`, { method: 'PUT', headers: bearer(org.key), json: { url: u } });
      expect(r.status, u).toBe(400);
    }
    // A name that resolves to loopback passes registration but is refused when connecting (checked on the resolved address).
    expect((await http(`${app.url}/api/v1/mcp/servers/x`, { method: 'PUT', headers: bearer(org.key), json: { url: 'http://localhost.localdomain:1/mcp' } })).status).toBeLessThan(300);
    const r = await http(`${app.url}/mcp/x`, { method: 'POST', headers: modernHeaders(org.key, 'tools/list'), json: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: META } } });
    expect(r.status).toBe(502);
    expect(r.body.error.message).toMatch(/PROXY_ALLOW_PRIVATE_UPSTREAMS|unreachable/);
  });
});
