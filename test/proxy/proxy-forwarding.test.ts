// The proxy with real SDK clients and servers over HTTP, on both protocol revisions: everything but tools/call passes
// through untouched, streams are not buffered, each tools/call gets its action (allow, deny, flag, redact, suspended
// session) and one first-hand record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, http, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { connectClient, type Era, type TestClient } from './mcp-clients.js';
import { startLegacyUpstream, startModernUpstream, type Upstream } from './mcp-upstreams.js';
import { addRule, clearRules, PROXY_ENV, proxyCalls, proxyOrg, registerServer } from './proxy-helpers.js';

describe.each(backendNames)('MCP proxy (%s backend)', (backendName) => {
  const { app } = suiteApp(backendName, PROXY_ENV);

  describe.each(['legacy', 'modern'] as Era[])('%s protocol revision', (era) => {
    let upstream: Upstream;
    let org: TestOrg;
    let proxied: TestClient;
    let direct: TestClient;
    const serverId = `${era}-srv`;
    const proxyUrl = () => `${app.url}/mcp/${serverId}`;

    beforeAll(async () => {
      upstream = era === 'legacy' ? await startLegacyUpstream() : await startModernUpstream();
      org = await proxyOrg(app.url);
      await registerServer(app.url, org, serverId, upstream.url, { headers: [{ name: 'X-Upstream-Token', value: 'upstream-secret-value', secret: true }] });
      proxied = await connectClient(era, proxyUrl(), org.key);
      direct = await connectClient(era, upstream.url, 'unused');
    });
    afterAll(async () => {
      await proxied?.close();
      await direct?.close();
      await upstream?.close();
    });

    it('passes tools/list through untouched, with the registered secret header sent upstream and never shown', async () => {
      const before = upstream.requests.length;
      const viaProxy = await proxied.listTools();
      expect(viaProxy).toEqual(await direct.listTools());
      const seen = upstream.requests.slice(before).find((r) => r.body.includes('tools/list'))!;
      expect(seen.headers['x-upstream-token']).toBe('upstream-secret-value');
      // The client's own credentials stay at the proxy.
      expect(seen.headers.authorization).toBeUndefined();
      const listing = await http(`${app.url}/api/v1/mcp/servers/${serverId}`, { headers: bearer(org.key) });
      expect(listing.body.headers).toEqual([{ name: 'X-Upstream-Token', value: null, secret: true }]);
      expect(JSON.stringify(listing.body)).not.toContain('upstream-secret-value');
    });

    it('streams progress notifications as they happen and records the call once, with the latency it measured', async () => {
      const seen: number[] = [];
      // The tool waits for the client to have seen each step before the next: a buffering proxy would never finish.
      const result = await proxied.callTool('progress', { steps: 3 }, {
        onprogress: (p) => {
          seen.push(p.progress);
          upstream.control.progressSeen.get(p.progress)?.();
        },
      });
      expect(seen).toEqual([1, 2, 3]);
      expect(result.content).toEqual([{ type: 'text', text: 'done after 3 steps' }]);
      await app.ctx.proxy.recorder.idle();
      const calls = (await proxyCalls(app.url, org)).filter((c) => c.toolName === 'progress');
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({ serverId, action: 'allow', source: 'proxy', type: 'tool_call' });
      expect(calls[0].latencyMs).toEqual(expect.any(Number));
      expect(calls[0].metadata.proxy).toMatchObject({ outcome: 'result', rule: null, argumentsBytes: JSON.stringify({ steps: 3 }).length });
      expect(calls[0].metadata.arguments).toEqual({ steps: 3 });
      if (era === 'legacy') expect(calls[0].sessionId).toBe(proxied.sessionId());
      else expect(calls[0].sessionId).toMatch(/^key:.+\/modern-test-client$/);
    });

    it('records a tool error as such', async () => {
      const r = await proxied.callTool('fail', {});
      expect(r.isError).toBe(true);
      await app.ctx.proxy.recorder.idle();
      const [call] = (await proxyCalls(app.url, org)).filter((c) => c.toolName === 'fail');
      expect(call.metadata.proxy.outcome).toBe('tool_error');
    });

    it('deny: the client gets a tool error naming the reason, the upstream never sees the call, the record says deny', async () => {
      await clearRules(app.url, org);
      await addRule(app.url, org, { name: 'no etc', condition: 'tool.name == "echo" && has(args.path) && args.path.startsWith("/etc/")', action: 'deny', reason: 'system files are off limits' });
      const before = upstream.control.calls.length;
      const r = await proxied.callTool('echo', { path: '/etc/shadow' });
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.content)).toContain('system files are off limits');
      expect(upstream.control.calls.length).toBe(before);
      // A call the rule does not match goes through.
      const ok = await proxied.callTool('echo', { path: '/tmp/x' });
      expect(ok.isError).toBeFalsy();
      await app.ctx.proxy.recorder.idle();
      const echoes = (await proxyCalls(app.url, org)).filter((c) => c.toolName === 'echo');
      expect(echoes.map((c) => c.action)).toEqual(['deny', 'allow']);
      expect(echoes[0].metadata.proxy).toMatchObject({ outcome: 'denied', reason: 'system files are off limits', rule: { name: 'no etc' } });
      await clearRules(app.url, org);
    });

    it('flag forwards and marks the record; redact forwards the arguments but stores them masked', async () => {
      await addRule(app.url, org, { name: 'watch echo', condition: 'tool.name == "echo" && has(args.text)', action: 'flag', reason: 'watched' });
      await addRule(app.url, org, { name: 'hide secrets', condition: 'has(args.secret)', action: 'redact', reason: 'carries a secret' });
      const flagged = await proxied.callTool('echo', { text: 'hello' });
      expect(flagged.content).toEqual([{ type: 'text', text: JSON.stringify({ text: 'hello' }) }]);
      const redacted = await proxied.callTool('echo', { secret: 'hunter2' });
      // Forwarded as sent: the upstream got the real value.
      expect(redacted.content).toEqual([{ type: 'text', text: JSON.stringify({ secret: 'hunter2' }) }]);
      await app.ctx.proxy.recorder.idle();
      const echoes = (await proxyCalls(app.url, org)).filter((c) => c.toolName === 'echo').slice(-2);
      expect(echoes.map((c) => c.action)).toEqual(['flag', 'redact']);
      expect(echoes[0].metadata).toMatchObject({ flagged: true, arguments: { text: 'hello' } });
      expect(echoes[1].metadata).toMatchObject({ arguments: { secret: '[redacted]' }, argumentsRedacted: true });
      expect(JSON.stringify(echoes[1])).not.toContain('hunter2');
      await clearRules(app.url, org);
    });

    it("refuses a suspended session's calls before they reach the upstream", async () => {
      const sessionId = `suspend-me-${era}`;
      const meta = { 'io.audit-stream/sessionId': sessionId };
      await proxied.callTool('echo', { text: 'first' }, { meta });
      await app.ctx.proxy.recorder.idle();
      const s = await http(`${app.url}/api/v1/sessions/${sessionId}/suspend`, { method: 'POST', headers: bearer(org.key), json: { reason: 'test' } });
      expect(s.status).toBe(200);
      const before = upstream.control.calls.length;
      const r = await proxied.callTool('echo', { text: 'second' }, { meta });
      expect(r.isError).toBe(true);
      expect(JSON.stringify(r.content)).toContain('session suspended');
      expect(upstream.control.calls.length).toBe(before);
      await app.ctx.proxy.recorder.idle();
      const calls = await proxyCalls(app.url, org, { sessionId });
      expect(calls.map((c) => [c.action, c.metadata.proxy.outcome])).toEqual([
        ['allow', 'result'],
        ['deny', 'denied'],
      ]);
    });

    it.runIf(era === 'legacy')('relays DELETE: the session ends at the upstream, and its id is refused there afterwards', async () => {
      const c = await connectClient('legacy', proxyUrl(), org.key);
      const sid = c.sessionId()!;
      await c.terminate();
      expect(upstream.requests.some((r) => r.method === 'DELETE' && r.headers['mcp-session-id'] === sid)).toBe(true);
      const after = await http(proxyUrl(), {
        method: 'POST',
        headers: { ...bearer(org.key), accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' },
        json: { jsonrpc: '2.0', id: 9, method: 'tools/list' },
      });
      expect(after.status).toBe(404);
      await c.close();
    });

    it.runIf(era === 'legacy')('relays resumption: a GET with Last-Event-ID replays, through the proxy, what the upstream sent after that event', async () => {
      const resumable = await startLegacyUpstream({ resumable: true });
      try {
        await registerServer(app.url, org, 'resumable', resumable.url);
        const url = `${app.url}/mcp/resumable`;
        const headers = { ...bearer(org.key), 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
        const init = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) });
        const sid = init.headers.get('mcp-session-id')!;
        await init.text();
        const session = { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-11-25' };
        await (await fetch(url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
        const res = await fetch(url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'progress', arguments: { steps: 1 }, _meta: { progressToken: 'p' } } }) });
        const reader = res.body!.getReader();
        let text = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(value);
          if (text.includes('notifications/progress')) resumable.control.progressSeen.get(1)?.();
        }
        // The progress event's id: resuming after it must replay the call's response.
        const progressId = /id: ?(\S+)\r?\ndata: [^\n]*notifications\/progress/.exec(text)?.[1];
        expect(progressId).toBeTruthy();
        const replay = await fetch(url, { headers: { ...session, accept: 'text/event-stream', 'last-event-id': progressId! } });
        expect(replay.status).toBe(200);
        const r2 = replay.body!.getReader();
        let replayed = '';
        while (!replayed.includes('done after 1 steps')) {
          const { value, done } = await r2.read();
          if (done) break;
          replayed += new TextDecoder().decode(value);
        }
        expect(replayed).toContain('"id":5');
        await r2.cancel();
        expect(resumable.requests.some((q) => q.method === 'GET' && q.headers['last-event-id'] === progressId)).toBe(true);
      } finally {
        await resumable.close();
      }
    });

    it.runIf(era === 'modern')('relays a subscriptions/listen stream: the acknowledgement, then change notifications as they happen', async () => {
      const ctrl = new AbortController();
      const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
      const res = await fetch(proxyUrl(), {
        method: 'POST',
        signal: ctrl.signal,
        headers: { ...bearer(org.key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'subscriptions/listen' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: META } }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
      const reader = res.body!.getReader();
      let text = '';
      const until = async (needle: string) => {
        while (!text.includes(needle)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`stream ended before ${needle}`);
          text += new TextDecoder().decode(value);
        }
      };
      await until('notifications/subscriptions/acknowledged');
      upstream.notifyToolsChanged!();
      await until('notifications/tools/list_changed');
      ctrl.abort();
    });

    it("answers another organization's server id with 404, and a key without mcp:call with 403", async () => {
      const other = await proxyOrg(app.url);
      const post = (key: string) =>
        http(proxyUrl(), { method: 'POST', headers: { ...bearer(key), accept: 'application/json, text/event-stream' }, json: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
      const r = await post(other.key);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
      const reader = await http(`${app.url}/api/v1/admin/organizations/${org.id}/api-keys`, { method: 'POST', headers: { authorization: 'Bearer test-admin-token-0123456789' }, json: { name: 'reader', scopes: ['events:read'] } });
      expect((await post(reader.body.key)).status).toBe(403);
    });
  });
});
