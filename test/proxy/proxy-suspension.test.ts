// Suspension acts everywhere at once: a session suspended through one instance is refused on the other (shared
// Postgres and Redis), and a rate spike that auto-suspends a session stops its next call through the proxy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realBackend, realBackendAvailable, type Backend, backendNames } from '../helpers/backends.js';
import { bearer, http, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';
import { openSse } from '../helpers/sse.js';
import { suiteApp } from '../helpers/suite-app.js';
import { FAST, putSettings } from '../anomaly/anomaly-helpers.js';
import { connectClient, type Era } from './mcp-clients.js';
import { startLegacyUpstream, startModernUpstream, type Upstream } from './mcp-upstreams.js';
import { PROXY_ENV, proxyCalls, proxyOrg, registerServer } from './proxy-helpers.js';

describe.runIf(realBackendAvailable)('suspension across two proxy instances (real Postgres and Redis)', () => {
  let backend: Backend;
  let a: RunningApp;
  let b: RunningApp;
  let org: TestOrg;
  let upstream: Upstream;

  beforeAll(async () => {
    backend = await realBackend();
    // Each instance caches an organization's configuration as in production; the session's status is never cached.
    a = await startApp({ ...backend.env, ...PROXY_ENV, PROXY_CONFIG_CACHE_MS: '60000' });
    b = await startApp({ ...backend.env, ...PROXY_ENV, PROXY_CONFIG_CACHE_MS: '60000' });
    org = await proxyOrg(a.url);
    upstream = await startModernUpstream();
    await registerServer(a.url, org, 'shared', upstream.url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await upstream?.close();
    await backend?.cleanup();
  });

  it('a session suspended through instance A has its next call through instance B refused; resumed through B, A forwards again', async () => {
    const meta = { 'io.audit-stream/sessionId': 'agent-7' };
    const onB = await connectClient('modern', `${b.url}/mcp/shared`, org.key);
    expect((await onB.callTool('echo', { text: 'before' }, { meta })).isError).toBeFalsy();
    await b.ctx.proxy.recorder.idle();
    // Suspended on A; B is told nothing directly (its only source is the database, read with the call's intent).
    expect((await http(`${a.url}/api/v1/sessions/agent-7/suspend`, { method: 'POST', headers: bearer(org.key), json: {} })).status).toBe(200);
    const calls = upstream.control.calls.length;
    const refused = await onB.callTool('echo', { text: 'after' }, { meta });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('session suspended');
    expect(upstream.control.calls.length).toBe(calls);
    // Resumed on B, a call through A goes through again.
    expect((await http(`${b.url}/api/v1/sessions/agent-7/resume`, { method: 'POST', headers: bearer(org.key), json: {} })).status).toBe(200);
    const onA = await connectClient('modern', `${a.url}/mcp/shared`, org.key);
    expect((await onA.callTool('echo', { text: 'again' }, { meta })).isError).toBeFalsy();
    await a.ctx.proxy.recorder.idle();
    await b.ctx.proxy.recorder.idle();
    expect((await proxyCalls(a.url, org, { sessionId: 'agent-7' })).map((c) => c.action)).toEqual(['allow', 'deny', 'allow']);
    await onA.close();
    await onB.close();
  });
});

describe.each(backendNames)('auto-suspension by a rate spike stops the session (%s backend)', (backendName) => {
  const { app } = suiteApp(backendName, PROXY_ENV);

  it.each(['legacy', 'modern'] as Era[])('%s: the calls that make the spike suspend their session; its next call is refused', async (era) => {
    const org = await proxyOrg(app.url);
    const upstream = era === 'legacy' ? await startLegacyUpstream() : await startModernUpstream();
    try {
      await registerServer(app.url, org, 'spiky', upstream.url);
      await putSettings(app.url, org.key, { ...FAST, suspendSessionsOnSpike: true });
      const updates = await openSse(`${app.url}/api/v1/events?types=session_update`, bearer(org.key));
      const client = await connectClient(era, `${app.url}/mcp/spiky`, org.key);
      const meta = { 'io.audit-stream/sessionId': `spiky-${era}` };
      // FAST: more than 10 calls within 10 s is a spike. Calls go on until one is refused (the suspension may land
      // between any two of them once the eleventh is stored).
      let allowed = 0;
      for (let i = 0; i < 60 && !(await client.callTool('echo', { text: `call ${i}` }, { meta })).isError; i++) allowed++;
      expect(allowed).toBeGreaterThan(10);
      await updates.waitFor((c) => c.events.some((e) => e.json.sessionId === `spiky-${era}` && e.json.status === 'suspended'), 20_000, 'the session suspended');
      const before = upstream.control.calls.length;
      const refused = await client.callTool('echo', { text: 'one more' }, { meta });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('session suspended');
      expect(upstream.control.calls.length).toBe(before);
      updates.close();
      await client.close();
    } finally {
      await upstream.close();
    }
  });
});
