// `npm run demo` against a real server, then the dashboard in Chromium at 1280 px and 390 px: figures from the server
// that survive a reload, anomalies on open, one-line ids that fit (whole on hover), a filter, a session's calls, and the API key screen.
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { realBackendAvailable } from '../helpers/backends.js';
import { ADMIN_TOKEN, bearer, http, postEvents, toolCall } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { chromiumAvailable, fitOf, launchChromium, runDemo, SHOTS, signedInPage } from './browser-kit.js';
import { shortId } from '../../src/dashboard/ids.js';

const EMAIL = 'admin@demo.local';
const PASSWORD = 'demo password for the screenshot';

describe.runIf(chromiumAvailable)('npm run demo, then the dashboard at 1280 and 390 px', () => {
  const { app } = suiteApp(realBackendAvailable ? 'real' : 'embedded');
  let key = '';
  let orgId = '';
  let browser: Browser;
  let wide: Page;
  let narrow: Page;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const api = (path: string, k = key) => http(`${app.url}${path}`, { headers: bearer(k) });

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    // The account `npm start` seeds, made through the admin API (this server runs with SEED_DEMO off).
    const org = await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', headers: admin, json: { name: 'Demo' } });
    orgId = org.body.id;
    await http(`${app.url}/api/v1/admin/organizations/${org.body.id}/users`, { method: 'POST', headers: admin, json: { email: EMAIL, password: PASSWORD, role: 'admin' } });
    const k = await http(`${app.url}/api/v1/admin/organizations/${org.body.id}/api-keys`, { method: 'POST', headers: admin, json: { name: 'demo key' } });
    key = k.body.key;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('npm run demo fills every panel: every action, servers, sessions, a suspension, CloudWatch, Datadog and a rate spike', async () => {
    const out = await runDemo(app.url, key);
    expect(out).toMatch(/anomaly: rate_spike/);
    const s = (await api('/api/v1/audit-events/stats?window=1h')).body;
    for (const a of ['allow', 'deny', 'redact', 'flag', 'unknown']) expect(s.actions[a], a).toBeGreaterThan(0);
    expect(s.buckets.filter((b: { total: number }) => b.total > 0).length).toBeGreaterThan(30);
    expect(s.sessions.seen).toBeGreaterThanOrEqual(5);
    expect(s.sessions.suspended).toBeGreaterThanOrEqual(1);
    expect(s.anomalies.length).toBeGreaterThanOrEqual(1);
    const day = (await api('/api/v1/audit-events/stats?window=24h')).body;
    expect(day.total).toBeGreaterThan(s.total);
    const calls = (await api('/api/v1/audit-events?type=tool_call&limit=1000')).body.items as { serverId: string }[];
    expect(new Set(calls.map((c) => c.serverId)).size).toBeGreaterThanOrEqual(5);
    for (const source of ['cloudwatch', 'datadog']) expect((await api(`/api/v1/audit-events?source=${source}`)).body.items.length, source).toBeGreaterThan(0);
  });

  it('shows the window figures from the server, the same after a reload, with a time axis and the anomalies', async () => {
    wide = await signedInPage(browser, app.url, EMAIL, PASSWORD, 1280, 800);
    const s = (await api('/api/v1/audit-events/stats?window=1h')).body;
    const shown = async (page: Page) => ({
      allow: Number(await page.locator('#action-counts [data-action="allow"]').getAttribute('data-count')),
      deny: Number(await page.locator('#action-counts [data-action="deny"]').getAttribute('data-count')),
      total: Number(await page.locator('#rate-chart').getAttribute('data-total')),
      anomalies: await page.locator('#anomaly-list li').count(),
    });
    await expect.poll(() => shown(wide), { timeout: 15_000 }).toEqual({ allow: s.actions.allow, deny: s.actions.deny, total: s.total, anomalies: s.anomalies.length });
    expect(await wide.locator('#rate-axis .tick').count()).toBeGreaterThanOrEqual(3);
    // The README's screenshot (docs/dashboard.png is copied from it): demo data, the demo account, no test address.
    await wide.screenshot({ path: `${SHOTS}/readme-dashboard.png` });
    expect(await wide.locator('#sessions-suspended').getAttribute('data-count')).toBe(String(s.sessions.suspended));
    await wide.reload();
    await wide.locator('#connection-state', { hasText: 'live' }).waitFor();
    await expect.poll(() => shown(wide), { timeout: 15_000 }).toEqual({ allow: s.actions.allow, deny: s.actions.deny, total: s.total, anomalies: s.anomalies.length });
    // The day's window, chosen on the page.
    const day = (await api('/api/v1/audit-events/stats?window=24h')).body;
    await wide.click('[data-window="24h"]');
    await expect.poll(async () => Number(await wide.locator('#action-total').getAttribute('data-count')), { timeout: 15_000 }).toBe(day.total);
    expect(await wide.locator('#rate-chart').getAttribute('data-buckets')).toBe('96');
    await wide.click('[data-window="1h"]');
    await expect.poll(async () => Number(await wide.locator('#action-total').getAttribute('data-count')), { timeout: 15_000 }).toBe(s.total);
    // A live call moves the figures at once.
    await postEvents(app.url, key, [toolCall(1, { action: 'deny', toolName: 'live_after_load' })]);
    await expect.poll(async () => Number(await wide.locator('#action-counts [data-action="deny"]').getAttribute('data-count')), { timeout: 10_000 }).toBe(s.actions.deny + 1);
    await wide.screenshot({ path: `${SHOTS}/demo-1280.png` });
  });

  it('shows session ids on one line (whole on hover) and dates of other days, and copies an id on click', async () => {
    await postEvents(app.url, key, [toolCall(2, { toolName: 'old_call', serverId: 'archive-mcp', timestamp: '2024-05-01T10:00:00.000Z' })]);
    await wide.reload();
    const old = wide.locator('#tool-calls-body tr', { hasText: 'old_call' });
    await old.waitFor({ timeout: 10_000 });
    expect(await old.locator('td.time').textContent()).toMatch(/^2024-05-0[12] /);
    const sessions = (await api('/api/v1/sessions')).body.items as { sessionId: string }[];
    for (const { sessionId } of sessions) {
      const id = wide.locator(`#sessions-body tr[data-session-id="${sessionId}"] [data-session]`);
      const fit = await fitOf(id, 'tr');
      expect(fit, sessionId).toEqual({ text: shortId(sessionId), inViewport: true, inContainer: true, notClipped: true });
      expect(await id.getAttribute('title'), sessionId).toContain(sessionId);
      expect((await id.boundingBox())!.height, sessionId).toBeLessThan(20);
    }
    await wide.locator('#tool-calls-body tr .copyable').first().click();
    const copied = await wide.locator('#tool-calls-body tr .copyable').first().getAttribute('data-copy');
    expect(await wide.evaluate(() => navigator.clipboard.readText())).toBe(copied);
  });

  it('filters the tool calls and opens a session with its calls', async () => {
    await wide.fill('#calls-filter', 'postgres deny');
    const visible = wide.locator('#tool-calls-body tr:visible');
    await expect.poll(() => visible.count()).toBeGreaterThan(0);
    for (const text of await visible.allTextContents()) expect(text).toMatch(/postgres[\s\S]*deny/);
    expect(await visible.count()).toBeLessThan(await wide.locator('#tool-calls-body tr').count());
    await wide.fill('#calls-filter', '');
    const sessionId = (await wide.locator('#sessions-body [data-session]').first().getAttribute('data-session')) as string;
    await wide.locator('#sessions-body [data-session]').first().click();
    const dialog = wide.locator('#session-dialog');
    await expect.poll(() => dialog.getAttribute('data-session-id')).toBe(sessionId);
    const stored = (await api(`/api/v1/audit-events?type=tool_call&sessionId=${encodeURIComponent(sessionId)}&limit=200`)).body.items;
    await expect.poll(() => dialog.locator('tbody tr').count(), { timeout: 10_000 }).toBe(stored.length);
    expect(await dialog.locator('#session-dialog-id').textContent()).toBe(sessionId);
    await wide.screenshot({ path: `${SHOTS}/demo-1280-session.png` });
    await wide.click('#session-dialog-close');
    expect(await dialog.isVisible()).toBe(false);
  });

  it('at 390 px every Suspend button has its session id beside it, inside the card and the screen', async () => {
    narrow = await signedInPage(browser, app.url, EMAIL, PASSWORD, 390, 844);
    await narrow.locator('#sessions-body tr').first().waitFor();
    const rows = narrow.locator('#sessions-body tr:has(button[data-op])');
    const n = await rows.count();
    expect(n).toBeGreaterThanOrEqual(5);
    for (let i = 0; i < n; i++) {
      const row = rows.nth(i);
      const expected = await row.getAttribute('data-session-id');
      expect(await fitOf(row.locator('[data-session]'), 'tr')).toEqual({ text: shortId(expected as string), inViewport: true, inContainer: true, notClipped: true });
      expect(await row.locator('[data-session]').getAttribute('data-session')).toBe(expected);
      expect(await fitOf(row.locator('button[data-op]'), 'tr')).toMatchObject({ inViewport: true, inContainer: true, notClipped: true });
    }
    // Tool-call cards show whole values too; the brand stays on one line; nothing scrolls sideways.
    const first = narrow.locator('#tool-calls-body tr').first();
    for (const sel of ['td.tool', 'td.time', '.copyable']) expect(await fitOf(first.locator(sel).first(), 'tr'), sel).toMatchObject({ inViewport: true, inContainer: true, notClipped: true });
    expect((await narrow.locator('.brand').boundingBox())!.height).toBeLessThan(30);
    expect(await narrow.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await narrow.screenshot({ path: `${SHOTS}/demo-390.png`, fullPage: true });
  });

  it('lets an org admin list, create (shown once, copied) and revoke API keys, also at 390 px', async () => {
    for (const page of [wide, narrow]) {
      await page.click('#nav-keys');
      await page.locator('#keys-body tr').first().waitFor();
      const name = `ci-key-${page === wide ? 'wide' : 'narrow'}`;
      await page.fill('#key-name', name);
      await page.uncheck('input[value="ingest:write"]');
      await page.click('#key-form button[type=submit]');
      const value = page.locator('#new-key-value');
      await expect.poll(() => value.textContent()).toMatch(/^ask_/);
      const created = (await value.textContent()) as string;
      await page.click('#new-key-copy');
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(created);
      expect((await api('/api/v1/audit-events?limit=1', created)).status).toBe(200);
      const row = page.locator('#keys-body tr', { hasText: name });
      expect(await row.textContent()).toContain(created.slice(0, 12));
      expect(await row.textContent()).toContain('events:read');
      expect(await row.textContent()).not.toContain('ingest:write');
      expect(await row.textContent()).toContain('never');
      await page.screenshot({ path: `${SHOTS}/keys-${page === wide ? 1280 : 390}.png`, fullPage: true });
      await page.click('#new-key-done');
      expect(await page.locator('#new-key').isVisible()).toBe(false);
      await row.locator('button[data-revoke]').click();
      await row.locator('button[data-revoke]', { hasText: 'Confirm revoke' }).click();
      await page.locator('#keys-body tr[data-state="revoked"]', { hasText: name }).waitFor({ timeout: 10_000 });
      expect((await api('/api/v1/audit-events?limit=1', created)).status).toBe(401);
      await page.click('#nav-live');
    }
  });

  it('shows no key screen to members', async () => {
    await http(`${app.url}/api/v1/admin/organizations/${orgId}/users`, { method: 'POST', headers: admin, json: { email: 'member@demo.local', password: 'member password', role: 'member' } });
    const page = await signedInPage(browser, app.url, 'member@demo.local', 'member password', 1280);
    expect(await page.locator('#nav-keys').isVisible()).toBe(false);
    await page.goto(`${app.url}/#keys`);
    await page.locator('#connection-state', { hasText: 'live' }).waitFor();
    expect(await page.locator('#keys-view').isVisible()).toBe(false);
    expect(await page.locator('#dashboard').isVisible()).toBe(true);
  });
});
