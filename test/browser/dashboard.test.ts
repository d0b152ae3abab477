// The dashboard in real Chromium (playwright-core): login, live rows, anomalies, suspend, cross-origin EventSource, reconnect.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { embeddedBackend, realBackend, realBackendAvailable, type Backend } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, startApp, toolCall, type RunningApp, type TestOrg } from '../helpers/app.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = 'test-results';

/** A page on another origin that opens the stream with credentials and lists what it receives. */
function crossOriginPage(apiBase: string): string {
  return `<!doctype html><html><body data-state="connecting"><ul id="got"></ul><script>
    const es = new EventSource(${JSON.stringify(apiBase)} + '/api/v1/events', { withCredentials: true });
    es.onopen = () => { document.body.dataset.state = 'open'; };
    es.onerror = () => { if (es.readyState === EventSource.CLOSED) document.body.dataset.state = 'refused'; };
    es.addEventListener('tool_call', (e) => {
      const li = document.createElement('li'); li.textContent = JSON.parse(e.data).toolName; document.getElementById('got').append(li);
    });
  </script></body></html>`;
}

async function servePage(html: () => string): Promise<{ server: Server; origin: string }> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` };
}

describe.runIf(existsSync(CHROMIUM))('dashboard in Chromium', () => {
  let backend: Backend;
  let app: RunningApp;
  let proxy: TcpProxy;
  let base: string;
  let org: TestOrg;
  let browser: Browser;
  let page: Page;
  let apiBase = '';
  const allowed = servePage(() => crossOriginPage(apiBase));
  const denied = servePage(() => crossOriginPage(apiBase));

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    backend = realBackendAvailable ? await realBackend() : await embeddedBackend();
    const { origin } = await allowed;
    app = await startApp({ ...backend.env, CORS_ORIGINS: origin, SSE_RETRY_MS: '300' });
    apiBase = app.url;
    // The page talks to the service through a proxy of the test's own, so the test can cut its connection.
    proxy = await startTcpProxy('127.0.0.1', Number(new URL(app.url).port));
    base = `http://127.0.0.1:${proxy.port}`;
    org = await createOrg(app.url);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
    });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await app?.close();
    (await allowed).server.close();
    (await denied).server.close();
    await backend?.cleanup();
  });

  const rows = () => page.locator('#tool-calls-body tr');

  it('signs in and goes live', async () => {
    const res = await page.goto(base);
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");
    await page.locator('#login-form').waitFor();
    await page.fill('#login-email', org.email);
    await page.fill('#login-password', 'wrong password');
    await page.click('#login-form button[type=submit]');
    await expect.poll(() => page.locator('#login-error').textContent(), { timeout: 15_000 }).toMatch(/wrong email or password/i);
    await page.fill('#login-password', org.password);
    await page.click('#login-form button[type=submit]');
    await page.locator('#connection-state', { hasText: 'live' }).waitFor();
    expect(await page.locator('#dashboard').isVisible()).toBe(true);
  });

  it('shows an event posted with an API key within a second', async () => {
    const latencies: number[] = [];
    for (let i = 0; i < 3; i++) {
      const name = `first-tool-${i}`;
      const r = await postEvents(app.url, org.key, [toolCall(i, { toolName: name, serverId: 'github-mcp', sessionId: 'sess-a', latencyMs: 40 + i })]);
      expect(r.status).toBe(200);
      const posted = Date.now();
      await rows().filter({ hasText: name }).first().waitFor({ timeout: 10_000 });
      latencies.push(Date.now() - posted);
    }
    console.log(`dashboard: event posted -> row shown in ${latencies.join(', ')} ms`);
    expect(Math.max(...latencies)).toBeLessThan(1000);
    const first = rows().first();
    expect(await first.textContent()).toContain('first-tool-2');
    expect(await first.textContent()).toContain('github-mcp');
    expect(Number(await page.locator('#action-counts [data-action="allow"]').textContent())).toBeGreaterThanOrEqual(3);
  });

  it('shows an anomaly when a tool spikes', async () => {
    const put = await http(`${app.url}/api/v1/anomaly-settings`, { method: 'PUT', headers: bearer(org.key), json: { windowSeconds: 10, minRate: 30, multiplier: 3, cooldownSeconds: 60 } });
    expect(put.status).toBe(200);
    const burst = Array.from({ length: 40 }, (_, i) => toolCall(i, { toolName: 'bulk_export', serverId: 'files-mcp', sessionId: `burst-${i % 3}` }));
    expect((await postEvents(app.url, org.key, burst)).status).toBe(200);
    const item = page.locator('#anomaly-list li').filter({ hasText: 'bulk_export' }).first();
    await item.waitFor({ timeout: 15_000 });
    expect(await item.textContent()).toContain('files-mcp');
    // A varied minute of traffic for the screenshot: every action, several servers and sessions.
    const mix = [
      ['github-mcp', 'create_issue', 'allow', 'sess-7f3a'], ['slack-mcp', 'post_message', 'redact', 'sess-91c2'],
      ['postgres-mcp', 'run_query', 'deny', 'sess-7f3a'], ['github-mcp', 'merge_pr', 'flag', 'sess-44de'],
      ['browser-mcp', 'fetch_url', 'allow', 'sess-91c2'], ['postgres-mcp', 'drop_table', 'deny', 'sess-44de'],
    ];
    await postEvents(app.url, org.key, mix.map(([serverId, toolName, action, sessionId], i) => toolCall(i, { serverId, toolName, action, sessionId, latencyMs: 12 + i * 17 })));
    await rows().filter({ hasText: 'drop_table' }).first().waitFor({ timeout: 10_000 });
    await page.screenshot({ path: `${SHOTS}/dashboard-live.png`, fullPage: true });
  });

  it('suspends a session from the page and shows its session_update', async () => {
    await postEvents(app.url, org.key, [toolCall(1, { sessionId: 'sess-ui', toolName: 'read_file', serverId: 'files-mcp' })]);
    const row = page.locator('#sessions tr[data-session-id="sess-ui"]');
    await row.waitFor({ timeout: 10_000 });
    await row.locator('button[data-op="suspend"]').click();
    await page.fill('#suspend-reason', 'from the browser test');
    await page.click('#suspend-confirm');
    await expect.poll(() => row.locator('[data-status]').textContent(), { timeout: 10_000 }).toContain('suspended');
    const stored = await http(`${app.url}/api/v1/audit-events?type=session_update&sessionId=sess-ui`, { headers: bearer(org.key) });
    const suspended = stored.body.items.find((e: { metadata: { transition?: string } }) => e.metadata.transition === 'suspended');
    expect(suspended.metadata.by).toContain(org.email);
    expect(suspended.metadata.reason).toBe('from the browser test');
    await row.locator('button[data-op="resume"]').click();
    await expect.poll(() => row.locator('[data-status]').textContent(), { timeout: 10_000 }).toContain('active');
  });

  it('lets an allowlisted origin open the stream with credentials, and refuses one that is not listed', async () => {
    const ok = await (await browser.contexts()[0].newPage());
    await ok.goto((await allowed).origin);
    await ok.locator('body[data-state="open"]').waitFor({ state: 'attached', timeout: 10_000 });
    await postEvents(app.url, org.key, [toolCall(1, { toolName: 'cross-origin-tool' })]);
    await ok.locator('#got li', { hasText: 'cross-origin-tool' }).waitFor({ timeout: 10_000 });
    const bad = await browser.contexts()[0].newPage();
    await bad.goto((await denied).origin);
    await bad.locator('body[data-state="refused"]').waitFor({ state: 'attached', timeout: 10_000 });
    expect(await bad.locator('#got li').count()).toBe(0);
    await ok.close();
    await bad.close();
    // The grant itself: only the listed origin, with credentials, never "*".
    const pre = await fetch(`${app.url}/api/v1/events`, { method: 'OPTIONS', headers: { origin: (await allowed).origin, 'access-control-request-method': 'GET' } });
    expect(pre.headers.get('access-control-allow-origin')).toBe((await allowed).origin);
    expect(pre.headers.get('access-control-allow-credentials')).toBe('true');
    const other = await fetch(`${app.url}/api/v1/events`, { method: 'OPTIONS', headers: { origin: (await denied).origin, 'access-control-request-method': 'GET' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('reconnects after its connection is cut and resumes without duplicate rows', async () => {
    const before = await rows().count();
    proxy.cut();
    await page.locator('#connection-state', { hasText: 'reconnecting' }).waitFor({ timeout: 10_000 });
    const missed = Array.from({ length: 5 }, (_, i) => toolCall(i, { toolName: `while-away-${i}`, sessionId: null }));
    expect((await postEvents(app.url, org.key, missed)).status).toBe(200);
    proxy.restore();
    await page.locator('#connection-state', { hasText: 'live' }).waitFor({ timeout: 20_000 });
    for (let i = 0; i < 5; i++) await rows().filter({ hasText: `while-away-${i}` }).first().waitFor({ timeout: 10_000 });
    await postEvents(app.url, org.key, [toolCall(9, { toolName: 'after-reconnect' })]);
    await rows().filter({ hasText: 'after-reconnect' }).first().waitFor({ timeout: 10_000 });
    const seqs = await rows().evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.seq));
    expect(new Set(seqs).size).toBe(seqs.length);
    for (let i = 0; i < 5; i++) expect(await rows().filter({ hasText: `while-away-${i}` }).count()).toBe(1);
    expect(await rows().count()).toBe(before + 6);
    await page.screenshot({ path: `${SHOTS}/dashboard-after-reconnect.png`, fullPage: true });
  });
});
