// The proxy's bounds against a raw upstream of the test's own: a response head over PROXY_MAX_UPSTREAM_HEADER_BYTES, a
// message over PROXY_MAX_INSPECTED_MESSAGE_BYTES, a client that stops reading a stream (PROXY_STREAM_DRAIN_TIMEOUT_MS),
// calls and requests in flight per key, streams in all, and the most a server's timeout may be.
import { createServer, request, type ClientRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, bearer, http, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { PROXY_ENV, proxyCalls, proxyOrg, registerServer } from './proxy-helpers.js';

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };

/** A bare HTTP upstream: answers tools/call by tool name, and floods a GET stream. */
async function rawUpstream() {
  const hanging: ServerResponse[] = [];
  const streamClosed: Promise<void>[] = [];
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method === 'GET' && req.url?.includes('idle')) {
      // A quiet stream: open, nothing sent.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      return void hanging.push(res);
    }
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = `data: ${'x'.repeat(64 * 1024)}\n\n`;
      streamClosed.push(new Promise((resolve) => res.on('close', () => resolve())));
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
      return;
    }
    let body = '';
    for await (const c of req) body += c;
    const msg = JSON.parse(body) as { id: number; params: { name: string } };
    const name = msg.params?.name;
    if (name === 'hang') return void hanging.push(res);
    if (name === 'bigheader') {
      res.writeHead(200, { 'content-type': 'application/json', 'x-padding': 'p'.repeat(8 * 1024) });
      return void res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [] } }));
    }
    const text = name === 'bigresult' ? 'r'.repeat(8 * 1024) : 'ok';
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text }] } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`,
    hanging,
    streamClosed,
    close: async () => {
      for (const r of hanging) r.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(() => r(undefined)));
    },
  };
}

/** Opens a GET stream and resolves with its status once the head arrived; the body is never read. `req.destroy()` ends it. */
function openStream(url: string, key: string): Promise<{ status: number; req: ClientRequest; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { ...bearer(key), accept: 'text/event-stream' } }, (res) => {
      res.pause();
      resolve({ status: res.statusCode ?? 0, req, res });
    });
    req.on('error', reject);
    req.end();
  });
}

function call(url: string, key: string, name: string, session: string) {
  return http(url, {
    method: 'POST',
    headers: { ...bearer(key), accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
    json: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {}, _meta: { ...META, 'io.audit-stream/sessionId': session } } },
  });
}

describe('proxy bounds (embedded backend)', () => {
  const { app } = suiteApp('embedded', {
    ...PROXY_ENV,
    PROXY_MAX_UPSTREAM_HEADER_BYTES: '4096',
    PROXY_MAX_INSPECTED_MESSAGE_BYTES: '4096',
    PROXY_STREAM_DRAIN_TIMEOUT_MS: '300',
    PROXY_MAX_CALLS_PER_KEY: '2',
    PROXY_MAX_REQUESTS_PER_KEY: '3',
    PROXY_MAX_STREAMS_TOTAL: '1',
    PROXY_UPSTREAM_TIMEOUT_MAX_MS: '20000',
  });
  let upstream: Awaited<ReturnType<typeof rawUpstream>>;
  let org: TestOrg;
  const url = () => `${app.url}/mcp/raw`;

  beforeAll(async () => {
    upstream = await rawUpstream();
    org = await proxyOrg(app.url);
    await registerServer(app.url, org, 'raw', upstream.url, { timeoutMs: 60_000 });
    await registerServer(app.url, org, 'quiet', `${upstream.url}?idle=1`);
  });
  afterAll(async () => {
    await upstream?.close();
  });

  it('caps a server timeout at PROXY_UPSTREAM_TIMEOUT_MAX_MS', async () => {
    expect((await http(`${app.url}/api/v1/mcp/servers/raw`, { headers: bearer(org.key) })).body.timeoutMs).toBe(20_000);
  });

  it('refuses an upstream response head over PROXY_MAX_UPSTREAM_HEADER_BYTES (502) and records it', async () => {
    const r = await call(url(), org.key, 'bigheader', 'b-head');
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe(-32002);
    await app.ctx.proxy.recorder.idle();
    const [rec] = await proxyCalls(app.url, org, { sessionId: 'b-head' });
    expect(rec.metadata.proxy.outcome).toBe('upstream_unreachable');
  });

  it('passes a message over PROXY_MAX_INSPECTED_MESSAGE_BYTES through whole, unread', async () => {
    const r = await call(url(), org.key, 'bigresult', 'b-result');
    expect(r.status).toBe(200);
    expect(r.body.result.content[0].text).toHaveLength(8 * 1024);
    await app.ctx.proxy.recorder.idle();
    const [rec] = await proxyCalls(app.url, org, { sessionId: 'b-result' });
    expect(rec.metadata.proxy.outcome).toBe('unread');
  });

  it('disconnects a stream whose client reads nothing for PROXY_STREAM_DRAIN_TIMEOUT_MS, and frees its place', async () => {
    const stream = await openStream(url(), org.key);
    expect(stream.status).toBe(200);
    // The client reads nothing: the proxy's backlog fills, the drain timeout ends the stream and the upstream exchange.
    await upstream.streamClosed[upstream.streamClosed.length - 1];
    await expect.poll(() => app.ctx.proxy.limiter.openStreams(), { timeout: 10_000 }).toBe(0);
    stream.req.destroy();
  });

  it('bounds streams in all (PROXY_MAX_STREAMS_TOTAL), calls per key (PROXY_MAX_CALLS_PER_KEY) and requests per key (PROXY_MAX_REQUESTS_PER_KEY)', async () => {
    const other = await http(`${app.url}/api/v1/admin/organizations/${org.id}/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, json: { name: 'other', scopes: ['mcp:call'] } });
    const quiet = `${app.url}/mcp/quiet`;
    const first = await openStream(quiet, org.key);
    expect(first.status).toBe(200);
    const second = await http(quiet, { headers: { ...bearer(other.body.key), accept: 'text/event-stream' } });
    expect(second.status).toBe(429);
    expect(second.body.error.message).toMatch(/PROXY_MAX_STREAMS_TOTAL/);

    // Two hanging calls of one key (different sessions): its third call is refused; another key's is not.
    const hangs = [call(url(), org.key, 'hang', 'k1'), call(url(), org.key, 'hang', 'k2')];
    await expect.poll(() => upstream.hanging.length, { timeout: 10_000 }).toBe(3);
    const third = await call(url(), org.key, 'echo', 'k3');
    expect(third.status).toBe(429);
    // The stream and two calls are three requests in flight: the key's fourth request of any kind is refused too.
    expect(third.body.error.message).toMatch(/PROXY_MAX_(CALLS|REQUESTS)_PER_KEY/);
    const list = await http(url(), { method: 'POST', headers: { ...bearer(org.key), accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' }, json: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: META } } });
    expect(list.status).toBe(429);
    expect(list.body.error.message).toMatch(/PROXY_MAX_REQUESTS_PER_KEY/);
    expect((await call(url(), other.body.key, 'echo', 'o1')).status).toBe(200);

    first.req.destroy();
    for (const r of upstream.hanging.splice(0)) r.end(r.getHeader('content-type') === 'text/event-stream' ? undefined : JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [] } }));
    await Promise.all(hangs);
    await expect.poll(() => app.ctx.proxy.limiter.openStreams(), { timeout: 10_000 }).toBe(0);
    expect((await call(url(), org.key, 'echo', 'k4')).status).toBe(200);
  });
});
