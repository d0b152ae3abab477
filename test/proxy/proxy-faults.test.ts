// Faults: a proxy process SIGKILLed while the upstream is mid-call leaves, after a restart, a record of that call
// (outcome unknown); with Postgres unreachable (a TCP proxy of the test's own, cut) calls are refused and nothing is
// forwarded unrecorded, unless the organization chose to forward, and then the record is stored once the store is back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realBackend, realBackendAvailable, type Backend } from '../helpers/backends.js';
import { bearer, http, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { reap, spawnServer, type ServerProcess } from '../reliability/processes.js';
import { connectClient } from './mcp-clients.js';
import { startModernUpstream, type Upstream } from './mcp-upstreams.js';
import { PROXY_ENV, proxyCalls, proxyOrg, registerServer } from './proxy-helpers.js';

describe.runIf(realBackendAvailable)('a proxy process killed mid-call', () => {
  let backend: Backend;
  let first: ServerProcess | undefined;
  let second: ServerProcess | undefined;
  let upstream: Upstream;

  beforeAll(async () => {
    backend = await realBackend();
    upstream = await startModernUpstream();
  });
  afterAll(async () => {
    await reap(first, second);
    await upstream?.close();
    await backend?.cleanup();
  });

  it('leaves, after a restart, exactly one record of the call it was forwarding (outcome unknown)', async () => {
    const env = { ...backend.env, ...PROXY_ENV, PROXY_SWEEP_INTERVAL_MS: '200', PROXY_SWEEP_GRACE_MS: '0' };
    first = await spawnServer({ env, name: 'proxy-1' });
    const org: TestOrg = await proxyOrg(first.url);
    // The call's deadline: one second, after which a left intent is swept into a record.
    await registerServer(first.url, org, 'slow', upstream.url, { timeoutMs: 1000 });
    const client = await connectClient('modern', `${first.url}/mcp/slow`, org.key);
    const started = new Promise((resolve) => upstream.control.hangStarted.push(resolve));
    const call = client.callTool('hang', { text: 'mid-call' }, { meta: { 'io.audit-stream/sessionId': 'killed' } }).catch((err: Error) => err);
    await started;
    first.kill('SIGKILL');
    await first.exited;
    expect(await call).toBeInstanceOf(Error);

    second = await spawnServer({ env, name: 'proxy-2' });
    // From the organization's first event: the sweep may store the record before the stream opens.
    const stream = await openSse(`${second.url}/api/v1/events?types=tool_call&lastEventId=0`, bearer(org.key));
    await stream.waitFor((c) => c.events.some((e) => e.json.toolName === 'hang'), 30_000, 'the swept record of the killed call');
    stream.close();
    const calls = await proxyCalls(second.url, org, { sessionId: 'killed' });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ toolName: 'hang', serverId: 'slow', action: 'allow', latencyMs: null });
    expect(calls[0].metadata.proxy).toMatchObject({ outcome: 'unknown' });
    expect(calls[0].metadata.arguments).toEqual({ text: 'mid-call' });
  });
});

describe.runIf(realBackendAvailable)('Postgres unreachable', () => {
  let backend: Backend;
  let pgProxy: TcpProxy;
  let app: RunningApp;
  let upstream: Upstream;
  let org: TestOrg;

  beforeAll(async () => {
    backend = await realBackend();
    const url = new URL(backend.env.DATABASE_URL);
    pgProxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
    url.port = String(pgProxy.port);
    app = await startApp({ ...backend.env, ...PROXY_ENV, DATABASE_URL: url.toString() });
    upstream = await startModernUpstream();
    org = await proxyOrg(app.url);
    await registerServer(app.url, org, 'srv', upstream.url);
  });
  afterAll(async () => {
    await app?.close();
    await pgProxy?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  it('refuses tool calls (fail closed) and forwards none of them; other organizations may choose to forward', async () => {
    const client = await connectClient('modern', `${app.url}/mcp/srv`, org.key);
    expect((await client.callTool('echo', { text: 'up' })).isError).toBeFalsy();
    await app.ctx.proxy.recorder.idle();
    const forwarded = upstream.control.calls.length;

    pgProxy.cut();
    for (let i = 0; i < 3; i++) {
      const err = await client.callTool('echo', { text: `down ${i}` }).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect(String((err as Error).message)).toMatch(/-32005.*audit store is unavailable/);
    }
    expect(upstream.control.calls.length).toBe(forwarded);
    pgProxy.restore();
    expect((await client.callTool('echo', { text: 'up again' })).isError).toBeFalsy();
    await app.ctx.proxy.recorder.idle();
    expect((await proxyCalls(app.url, org)).map((c) => c.metadata.arguments.text)).toEqual(['up', 'up again']);
    await client.close();
  });

  it('an organization that chose forward has its calls forwarded while the store is down, and recorded once it is back', async () => {
    const other = await proxyOrg(app.url);
    await registerServer(app.url, other, 'srv', upstream.url);
    expect((await http(`${app.url}/api/v1/mcp/settings`, { method: 'PUT', headers: bearer(other.key), json: { storeDown: 'forward' } })).status).toBe(200);
    const client = await connectClient('modern', `${app.url}/mcp/srv`, other.key);
    expect((await client.callTool('echo', { text: 'warm' })).isError).toBeFalsy();
    await app.ctx.proxy.recorder.idle();
    pgProxy.cut();
    const r = await client.callTool('echo', { text: 'while down' });
    expect(r.isError).toBeFalsy();
    await app.ctx.proxy.recorder.idle();
    expect(app.ctx.proxy.recorder.pendingCount()).toBe(1);
    pgProxy.restore();
    const stream = await openSse(`${app.url}/api/v1/events?types=tool_call`, bearer(other.key));
    await stream.waitFor(() => app.ctx.proxy.recorder.pendingCount() === 0, 30_000, 'the held record stored');
    stream.close();
    const calls = await proxyCalls(app.url, other);
    expect(calls.map((c) => c.metadata.arguments.text)).toEqual(['warm', 'while down']);
    expect(calls[1].metadata.proxy.forwardedWhileStoreDown).toBe(true);
    await client.close();
  });
});
