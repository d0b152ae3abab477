// What a newcomer hit, in Chromium at 1280 and 390 px: keys after a reload, anomalies acknowledged on the server, the
// 24 h window kept on reload, Suspend confirmed with a reason, the session dialog's status and actions, one-line ids,
// a chart that a burst does not flatten, and an empty organization told how to fill the dashboard.
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { realBackendAvailable } from '../helpers/backends.js';
import { ADMIN_TOKEN, bearer, http, postEvents, toolCall } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { chromiumAvailable, launchChromium, SHOTS, signedInPage } from './browser-kit.js';

interface Account { orgId: string; key: string; email: string; password: string }
const WIDTHS = [1280, 390] as const;
let n = 0;

describe.runIf(chromiumAvailable)('newcomer fixes at 1280 and 390 px', () => {
  const { app } = suiteApp(realBackendAvailable ? 'real' : 'embedded', { ANOMALY_MIN_RATE: '1000000000' });
  let browser: Browser;
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

  /** A fresh organization with an admin login and an all-scopes key. */
  async function account(): Promise<Account> {
    const i = ++n;
    const org = await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', headers: admin, json: { name: `Fix ${i}` } });
    const email = `fix${i}@demo.local`;
    const password = `fix password ${i}`;
    await http(`${app.url}/api/v1/admin/organizations/${org.body.id}/users`, { method: 'POST', headers: admin, json: { email, password, role: 'admin' } });
    const key = (await http(`${app.url}/api/v1/admin/organizations/${org.body.id}/api-keys`, { method: 'POST', headers: admin, json: { name: 'first key' } })).body.key;
    return { orgId: org.body.id, key, email, password };
  }
  const open = (a: Account, width: number) => signedInPage(browser, app.url, a.email, a.password, width, width > 1000 ? 800 : 844);
  const live = (page: Page) => page.locator('#connection-state', { hasText: 'live' }).waitFor({ timeout: 20_000 });

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('the API keys screen lists the keys after a reload (it said "No API keys yet")', async () => {
    for (const width of WIDTHS) {
      const a = await account();
      await http(`${app.url}/api/v1/admin/organizations/${a.orgId}/api-keys`, { method: 'POST', headers: admin, json: { name: `second key ${width}` } });
      const page = await open(a, width);
      await page.click('#nav-keys');
      await page.locator('#keys-body tr').first().waitFor();
      await page.reload();
      await live(page);
      await expect.poll(() => page.locator('#keys-body tr').count(), { timeout: 10_000 }).toBe(2);
      expect(await page.locator('#keys-body').textContent()).toContain(`second key ${width}`);
      expect(await page.locator('#keys-empty').isVisible()).toBe(false);
      await page.context().close();
    }
  });

  it('acknowledging anomalies is kept on the server: they stay acknowledged after a reload, for every member', async () => {
    const a = await account();
    expect((await http(`${app.url}/api/v1/anomaly-settings`, { method: 'PUT', headers: bearer(a.key), json: { windowSeconds: 10, minRate: 30, multiplier: 3, cooldownSeconds: 60 } })).status).toBe(200);
    const burst = Array.from({ length: 40 }, (_, i) => toolCall(i, { toolName: 'bulk_export', serverId: 'files-mcp', sessionId: `burst-${i % 3}` }));
    expect((await postEvents(app.url, a.key, burst)).status).toBe(200);
    const pages = await Promise.all(WIDTHS.map((w) => open(a, w)));
    for (const page of pages) await page.locator('#anomaly-list li', { hasText: 'bulk_export' }).waitFor({ timeout: 15_000 });
    await pages[0].click('#anomalies-clear');
    await expect.poll(() => pages[0].locator('#anomaly-list li').count()).toBe(0);
    expect(await pages[0].locator('#anomalies-ack').textContent()).toContain(a.email);
    const ack = (await http(`${app.url}/api/v1/anomalies/acknowledgement`, { headers: bearer(a.key) })).body;
    expect(ack.upToSeq).toBeGreaterThan(0);
    for (const page of pages) {
      await page.reload();
      await live(page);
      await expect.poll(() => page.locator('#anomalies-ack').textContent(), { timeout: 10_000 }).toContain('acknowledged');
      expect(await page.locator('#anomaly-list li').count()).toBe(0);
    }
    // A later anomaly is shown again.
    await http(`${app.url}/api/v1/anomaly-settings`, { method: 'PUT', headers: bearer(a.key), json: { cooldownSeconds: 0 } });
    await postEvents(app.url, a.key, Array.from({ length: 200 }, (_, i) => toolCall(i, { toolName: 'bulk_delete', serverId: 'files-mcp' })));
    for (const page of pages) await page.locator('#anomaly-list li', { hasText: 'bulk_delete' }).waitFor({ timeout: 15_000 });
    for (const page of pages) await page.context().close();
  });

  it('the 24 h window survives a reload and is in the URL', async () => {
    for (const width of WIDTHS) {
      const a = await account();
      await postEvents(app.url, a.key, [toolCall(1, { timestamp: new Date(Date.now() - 5 * 3_600_000).toISOString() })]);
      const page = await open(a, width);
      await page.click('[data-window="24h"]');
      await expect.poll(() => page.locator('#rate-chart').getAttribute('data-buckets')).toBe('96');
      expect(await page.evaluate(() => location.hash)).toBe('#live?window=24h');
      await page.reload();
      await live(page);
      await expect.poll(() => page.locator('#rate-chart').getAttribute('data-buckets')).toBe('96');
      expect(await page.locator('[data-window="24h"]').getAttribute('aria-pressed')).toBe('true');
      await expect.poll(async () => Number(await page.locator('#action-total').getAttribute('data-count'))).toBe(1);
      // Back from another screen, the window is still the day's.
      await page.click('#nav-explore');
      await page.click('#nav-live');
      await expect.poll(() => page.locator('#rate-chart').getAttribute('data-buckets')).toBe('96');
      await page.context().close();
    }
  });

  it('Suspend asks for confirmation and a reason; the reason is kept', async () => {
    for (const width of WIDTHS) {
      const a = await account();
      const session = `sess-confirm-${width}`;
      await postEvents(app.url, a.key, [toolCall(1, { sessionId: session, serverId: 'postgres-mcp', toolName: 'drop_table', action: 'deny' })]);
      const page = await open(a, width);
      const row = page.locator(`#sessions-body tr[data-session-id="${session}"]`);
      await row.waitFor({ timeout: 10_000 });
      const dialog = page.locator('#suspend-dialog');
      await row.locator('button[data-op="suspend"]').click();
      await dialog.waitFor();
      expect(await dialog.locator('#suspend-session-id').textContent()).toBe(session);
      await dialog.locator('button[value="cancel"]').click();
      expect(await dialog.isVisible()).toBe(false);
      expect((await http(`${app.url}/api/v1/sessions/${session}`, { headers: bearer(a.key) })).body.status).toBe('active');
      await row.locator('button[data-op="suspend"]').click();
      await page.fill('#suspend-reason', `tried to drop a production table (${width})`);
      if (width === 1280) await page.screenshot({ path: `${SHOTS}/suspend-confirm-1280.png` });
      await page.click('#suspend-confirm');
      await expect.poll(() => row.locator('[data-status]').textContent(), { timeout: 10_000 }).toContain('suspended');
      const stored = (await http(`${app.url}/api/v1/sessions/${session}`, { headers: bearer(a.key) })).body;
      expect(stored).toMatchObject({ status: 'suspended', statusReason: `tried to drop a production table (${width})`, statusChangedBy: `user:${a.email}` });
      expect(await row.locator('[data-status]').getAttribute('title')).toContain('tried to drop');
      await page.context().close();
    }
  });

  it('the session dialog shows the status, its reason, and Suspend/Resume', async () => {
    for (const width of WIDTHS) {
      const a = await account();
      const session = `sess-dialog-${width}-0123456789abcdef`;
      await postEvents(app.url, a.key, [toolCall(1, { sessionId: session, serverId: 'github-mcp' }), toolCall(2, { sessionId: session, serverId: 'github-mcp' })]);
      const page = await open(a, width);
      await page.locator(`#sessions-body [data-session="${session}"]`).click();
      const dialog = page.locator('#session-dialog');
      await expect.poll(() => dialog.locator('#session-dialog-state').textContent(), { timeout: 10_000 }).toBe('active');
      await expect.poll(() => dialog.locator('tbody tr').count()).toBe(2);
      await dialog.locator('button[data-op="suspend"]').click();
      await page.fill('#suspend-reason', 'seen in the dialog');
      await page.click('#suspend-confirm');
      await expect.poll(() => dialog.locator('#session-dialog-state').textContent(), { timeout: 10_000 }).toBe('suspended');
      expect(await dialog.locator('#session-dialog-reason').textContent()).toContain('seen in the dialog');
      expect(await dialog.locator('#session-dialog-status').textContent()).toContain(a.email);
      if (width === 1280) await page.screenshot({ path: `${SHOTS}/session-dialog-1280.png` });
      await dialog.locator('button[data-op="resume"]').click();
      await expect.poll(() => dialog.locator('#session-dialog-state').textContent(), { timeout: 10_000 }).toBe('active');
      // The table behind shows it too.
      await expect.poll(() => page.locator(`#sessions-body tr[data-session-id="${session}"] [data-status]`).textContent()).toContain('active');
      await page.context().close();
    }
  });

  it('ids take one line (shortened, the whole id on hover, in the copy and the detail panel), times say their zone', async () => {
    const a = await account();
    const server = 'mcp-server-with-a-rather-long-identifier-7f3a9c';
    const session = '3f2b8a9e-5c1d-4e7f-9a0b-1c2d3e4f5a6b';
    await postEvents(app.url, a.key, [toolCall(1, { serverId: server, sessionId: session, toolName: 'long_ids' })]);
    for (const width of WIDTHS) {
      const page = await open(a, width);
      const row = page.locator('#tool-calls-body tr', { hasText: 'long_ids' });
      await row.waitFor({ timeout: 10_000 });
      const ids = row.locator('.idv');
      for (const [i, whole] of [server, session].entries()) {
        const id = ids.nth(i);
        expect((await id.textContent())!.length).toBeLessThan(whole.length);
        expect(await id.getAttribute('title')).toContain(whole);
        const box = (await id.boundingBox())!;
        expect(box.height, whole).toBeLessThan(20); // one line, not three
      }
      expect(await page.locator('#calls-time-head').textContent()).toMatch(/^Time \(UTC([+-]\d{1,2}(:\d\d)?)?\)$/);
      await ids.first().click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(server);
      await row.locator('td.tool').click();
      await page.locator('#event-panel [data-field="Server"]').waitFor();
      expect(await page.locator('#event-panel [data-field="Server"] dd').textContent()).toContain(server);
      expect(await page.locator('#event-panel [data-field="Session"] dd').textContent()).toContain(session);
      await page.click('#event-panel-close');
      await page.context().close();
    }
  });

  it('the chart stays readable through a burst: the burst bucket is clipped and labelled, the others keep their height', async () => {
    const a = await account();
    const now = Date.now();
    const calls = [];
    for (let m = 1; m <= 30; m++) for (let i = 0; i < 6 + (m % 4); i++) calls.push(toolCall(i, { timestamp: new Date(now - m * 60_000).toISOString() }));
    for (let i = 0; i < 3000; i++) calls.push(toolCall(i, { toolName: 'burst', timestamp: new Date(now - 35 * 60_000).toISOString() }));
    expect((await postEvents(app.url, a.key, calls)).status).toBe(200);
    for (const width of WIDTHS) {
      const page = await open(a, width);
      await expect.poll(() => page.locator('#rate-chart').getAttribute('data-peak'), { timeout: 10_000 }).toBe('3000');
      expect(Number(await page.locator('#rate-chart').getAttribute('data-top'))).toBeLessThanOrEqual(20);
      expect(await page.locator('#rate-chart rect.clipped').count()).toBe(1);
      expect(await page.locator('#rate-bursts .burst-label').textContent()).toContain('3,000');
      const heights = await page.locator('#rate-chart rect.bar:not(.clipped)').evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('height'))).filter((hgt) => hgt > 0));
      expect(Math.min(...heights)).toBeGreaterThan(120 * 0.25); // at least a quarter of the chart's height
      expect(await page.locator('#rate-scale').textContent()).toMatch(/burst bucket clipped \(peak 3,000\)/);
      if (width === 1280) await page.screenshot({ path: `${SHOTS}/chart-burst-1280.png` });
      await page.context().close();
    }
  });

  it('an empty organization is told how to fill the dashboard (npm run demo), and the hint goes with the first event', async () => {
    for (const width of WIDTHS) {
      const a = await account();
      const page = await open(a, width);
      const hint = page.locator('#getting-started');
      await hint.waitFor();
      expect(await hint.textContent()).toContain('npm run demo -- --key');
      expect(await hint.textContent()).toContain('--follow');
      await postEvents(app.url, a.key, [toolCall(1)]);
      await hint.waitFor({ state: 'hidden', timeout: 10_000 });
      await page.reload();
      await live(page);
      expect(await hint.isVisible()).toBe(false);
      await page.context().close();
    }
  });
});
