// The explore view in Chromium at 1280 and 390 px: a query over history never loaded on the page is exactly the API's
// answer, the URL reproduces the view after a reload, pause buffers and resumes without loss or duplicate, and the
// detail panel shows a CloudWatch event's log group and raw message. Screenshots of both go to docs/.
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { realBackendAvailable } from '../helpers/backends.js';
import { ADMIN_TOKEN, bearer, http, postEvents, toolCall } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { chromiumAvailable, launchChromium, SHOTS } from './browser-kit.js';

const EMAIL = 'analyst@demo.local';
const PASSWORD = 'explore password for the test';
const HISTORY = 100_000;
const DAY = 86_400_000;

/** The local calendar day before `now` in `zone`, as datetime-local values of its start and of the next day's start. */
function yesterdayIn(zone: string, now = Date.now()): { from: string; to: string } {
  const day = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);
  return { from: `${day(now - DAY)}T00:00`, to: `${day(now)}T00:00` };
}

interface Item { seq: number; serverId: string | null; action: string | null }

describe.runIf(chromiumAvailable)('the explore view at 1280 and 390 px', () => {
  const { app } = suiteApp(realBackendAvailable ? 'real' : 'embedded', { ANOMALY_MIN_RATE: '1000000000' });
  let key = '';
  let browser: Browser;
  const pages: Record<number, Page> = {};
  const zones: Record<number, string> = { 1280: 'Europe/Paris', 390: 'America/New_York' };
  const api = async (path: string) => (await http(`${app.url}${path}`, { headers: bearer(key) })).body;

  /** Every event of a query string, through the API's own paging. */
  async function allOf(query: URLSearchParams): Promise<number[]> {
    const seqs: number[] = [];
    let cursor: string | null = null;
    do {
      const q = new URLSearchParams(query);
      q.set('limit', '1000');
      if (cursor) q.set('cursor', cursor);
      const page = await api(`/api/v1/audit-events?${q}`);
      seqs.push(...page.items.map((e: Item) => e.seq));
      cursor = page.nextCursor;
    } while (cursor);
    return seqs;
  }

  const shownSeqs = (page: Page) => page.locator('#explore-body tr').evaluateAll((trs) => trs.map((tr) => Number((tr as HTMLElement).dataset.seq)));

  async function openPage(width: number, hash: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width, height: width > 1000 ? 800 : 844 }, timezoneId: zones[width] });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.url });
    const page = await context.newPage();
    await page.goto(`${app.url}/${hash}`);
    await page.fill('#login-email', EMAIL);
    await page.fill('#login-password', PASSWORD);
    await page.click('#login-form button[type=submit]');
    await page.locator('#connection-state', { hasText: 'live' }).waitFor({ timeout: 30_000 });
    return page;
  }

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const org = await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', headers: admin, json: { name: 'Acme' } });
    await http(`${app.url}/api/v1/admin/organizations/${org.body.id}/users`, { method: 'POST', headers: admin, json: { email: EMAIL, password: PASSWORD, role: 'admin' } });
    key = (await http(`${app.url}/api/v1/admin/organizations/${org.body.id}/api-keys`, { method: 'POST', headers: admin, json: { name: 'explore' } })).body.key;
    // Three days of history, written by SQL as a busy organization's would be: 100,000 tool calls, 8 servers, 12
    // tools, 700 sessions, a few denied; the page loads none of them before it is asked.
    // In slices, each with a generous statement time (the shared machine may be busy).
    for (let first = 1; first <= HISTORY; first += 25_000) await app.ctx.db.transaction((tx) => tx.query(
      `INSERT INTO audit_events (org_id, seq, occurred_at, source, type, server_id, session_id, tool_name, action, latency_ms, metadata)
       SELECT $1, g, now() - interval '3 days' + (g * interval '3 days' / $2), 'raw', 'tool_call', server, session, tool, action, latency,
         jsonb_build_object('gateway', gw, 'message', gw || ' tools/call ' || server || '/' || tool || ' -> ' || action || ' in ' || latency || ' ms')
       FROM generate_series($3::int, $3::int + 24999) AS g,
       LATERAL (SELECT
         (ARRAY['github-mcp','postgres-mcp','slack-mcp','browser-mcp','files-mcp','jira-mcp','stripe-mcp','k8s-mcp'])[1 + g % 8] AS server,
         'sess-' || lpad(to_hex((g % 700) * 7919 + 4096), 6, '0') || '-' || (g % 700) AS session,
         (ARRAY['create_issue','run_query','post_message','fetch_url','read_file','write_file','list_commits','search','create_charge','apply_manifest','describe_table','merge_pr'])[1 + g % 12] AS tool,
         CASE WHEN g % 53 = 0 THEN 'deny' WHEN g % 29 = 0 THEN 'flag' WHEN g % 17 = 0 THEN 'redact' ELSE 'allow' END AS action,
         5 + (g * 37) % 900 AS latency,
         'mcp-gw-' || (g % 3) AS gw) AS v`,
      [org.body.id, HISTORY, first],
    ), { queryTimeoutMs: 120_000 });
    await app.ctx.db.query('UPDATE organizations SET event_seq = $2 WHERE id = $1', [org.body.id, HISTORY]);
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
  });

  for (const width of [1280, 390]) {
    it(`${width} px: the deny calls of one server from yesterday, among ${HISTORY.toLocaleString('en-US')} events, are exactly the API's answer; the URL reproduces the view`, async () => {
      const page = await openPage(width, '#explore');
      pages[width] = page;
      await page.locator('#explore-view').waitFor();
      expect(await page.locator('#explore-zone').textContent()).toContain(zones[width]);
      const { from, to } = yesterdayIn(zones[width]);
      await page.fill('#explore-serverId', 'postgres-mcp');
      await page.selectOption('#explore-action', 'deny');
      await page.selectOption('#explore-range', 'custom');
      await page.fill('#explore-from', from);
      await page.fill('#explore-to', to);
      await page.click('#explore-form button[type=submit]');
      await expect.poll(() => page.evaluate(() => location.hash), { timeout: 10_000 }).toContain('serverId=postgres-mcp');
      const hash = await page.evaluate(() => location.hash);
      const params = new URLSearchParams(hash.slice(hash.indexOf('?') + 1));
      expect(params.get('action')).toBe('deny');
      // The range in the URL is the local day typed, in the page's zone.
      const fromMs = Date.parse(params.get('from') as string);
      expect(Date.parse(params.get('to') as string) - fromMs).toBeGreaterThanOrEqual(23 * 3_600_000);
      expect(fromMs).toBeLessThan(Date.now() - 3_600_000);
      const expected = await allOf(new URLSearchParams({ serverId: 'postgres-mcp', action: 'deny', from: params.get('from') as string, to: params.get('to') as string }));
      expect(expected.length).toBeGreaterThan(5);
      expect(expected.length).toBeLessThan(100); // one page: exactly the answer, nothing more to load
      await expect.poll(() => shownSeqs(page), { timeout: 15_000 }).toEqual(expected);
      await expect.poll(() => page.locator('#explore-count').getAttribute('data-count')).toBe(String(expected.length));
      expect(await page.locator('#explore-more').isVisible()).toBe(false);
      for (const text of await page.locator('#explore-body tr').allTextContents()) expect(text).toMatch(/postgres-mcp[\s\S]*deny/);
      if (width === 1280) await page.screenshot({ path: `${SHOTS}/explore-1280.png` });
      // Reload: the same view from the URL alone.
      await page.reload();
      await page.locator('#connection-state', { hasText: 'live' }).waitFor({ timeout: 20_000 });
      await expect.poll(() => shownSeqs(page), { timeout: 15_000 }).toEqual(expected);
      expect(await page.inputValue('#explore-serverId')).toBe('postgres-mcp');
      expect(await page.inputValue('#explore-action')).toBe('deny');
      expect(await page.inputValue('#explore-range')).toBe('custom');
      expect(await page.inputValue('#explore-from')).toBe(from);
      expect(await page.locator('#explore-live').getAttribute('data-state')).toBe('off');
      // Nothing scrolls sideways at phone width.
      if (width === 390) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    });

    it(`${width} px: older pages come from the API by cursor, in the API's order`, async () => {
      const page = pages[width];
      await page.goto(`${app.url}/#explore?serverId=files-mcp&range=7d`);
      await expect.poll(() => shownSeqs(page).then((s) => s.length), { timeout: 15_000 }).toBe(100);
      await page.click('#explore-more');
      await expect.poll(() => shownSeqs(page).then((s) => s.length), { timeout: 15_000 }).toBe(200);
      const first = await api(`/api/v1/audit-events?serverId=files-mcp&limit=200&from=${new Date(Date.now() - 7 * DAY).toISOString()}`);
      expect(await shownSeqs(page)).toEqual(first.items.map((e: Item) => e.seq));
      const count = await api('/api/v1/audit-events/count?serverId=files-mcp');
      expect(await page.locator('#explore-count').getAttribute('data-count')).toBe(String(count.count));
    });
  }

  it('pause buffers new matching events and says how many; resume shows them without loss or duplicate', async () => {
    for (const width of [1280, 390]) {
      const page = pages[width];
      const server = `live-srv-${width}`;
      await page.goto(`${app.url}/#explore?serverId=${server}&range=1h`);
      await expect.poll(() => page.locator('#explore-live').getAttribute('data-state'), { timeout: 10_000 }).toBe('live');
      // Live first: one call arrives without a reload.
      await postEvents(app.url, key, [toolCall(0, { serverId: server, toolName: 'first_live' })]);
      await page.locator('#explore-body tr', { hasText: 'first_live' }).waitFor({ timeout: 15_000 });
      await page.click('#explore-pause');
      expect(await page.locator('#explore-live').getAttribute('data-state')).toBe('paused');
      const before = await shownSeqs(page);
      for (let b = 0; b < 3; b++) {
        const batch = Array.from({ length: 10 }, (_, i) => toolCall(i, { serverId: server, toolName: `while_paused_${b * 10 + i}` }));
        batch.push(toolCall(99, { serverId: 'someone-else', toolName: 'not_matching' }));
        expect((await postEvents(app.url, key, batch)).status).toBe(200);
      }
      await expect.poll(() => page.locator('#explore-waiting').getAttribute('data-waiting'), { timeout: 20_000 }).toBe('30');
      expect(await page.locator('#explore-waiting-text').textContent()).toContain('30 new events waiting');
      expect(await shownSeqs(page)).toEqual(before);
      if (width === 1280) await page.screenshot({ path: `${SHOTS}/explore-paused-1280.png` });
      await page.click('#explore-resume');
      const expected = await allOf(new URLSearchParams({ serverId: server }));
      expect(expected).toHaveLength(31);
      await expect.poll(() => shownSeqs(page), { timeout: 15_000 }).toEqual(expected);
      expect(new Set(await shownSeqs(page)).size).toBe(31);
      expect(await page.locator('#explore-waiting').isVisible()).toBe(false);
      await expect.poll(() => page.locator('#explore-count').getAttribute('data-count')).toBe('31');
      // Still live after resuming.
      await postEvents(app.url, key, [toolCall(1, { serverId: server, toolName: 'after_resume' })]);
      await page.locator('#explore-body tr', { hasText: 'after_resume' }).waitFor({ timeout: 15_000 });
      expect(new Set(await shownSeqs(page)).size).toBe(32);
    }
  });

  it("the detail panel shows a CloudWatch event's log group and raw message, every field, its session's neighbours and filter links", async () => {
    const message = '2026-11-25T10:00:01.250Z\t8f5d3c2a-1b4e-4c6d-9e8f-0a1b2c3d4e5f\tINFO\t{"tool":"exec_sql","action":"blocked","server_id":"mcp-postgres","session_id":"sess-42","latency_ms":4,"trace_id":"1-67a2b3c4-0123456789abcdef01234567"}';
    const now = Date.now();
    const cw = await http(`${app.url}/api/v1/ingest/cloudwatch`, {
      method: 'POST',
      headers: bearer(key),
      json: {
        logGroup: '/aws/lambda/mcp-gateway-prod',
        logStream: '2026/11/25/[$LATEST]4f6a9c1e',
        events: [
          { message: 'tool=search_docs action=allowed server=mcp-postgres session=sess-42 latency_ms=87', timestamp: new Date(now - 2000).toISOString() },
          { message, timestamp: new Date(now - 1000).toISOString() },
          { message: 'tool=describe_table action=allowed server=mcp-postgres session=sess-42 latency_ms=12', timestamp: new Date(now).toISOString() },
        ],
      },
    });
    expect(cw.status).toBe(200);
    const stored = (await api('/api/v1/audit-events?source=cloudwatch&toolName=exec_sql')).items[0];
    for (const width of [1280, 390]) {
      const page = pages[width];
      await page.goto(`${app.url}/#explore?source=cloudwatch&range=1h`);
      const row = page.locator(`#explore-body tr[data-seq="${stored.seq}"]`);
      await row.waitFor({ timeout: 15_000 });
      await row.locator('td.tool').click();
      const panel = page.locator('#event-panel');
      await panel.locator('#event-raw-message').waitFor({ timeout: 10_000 });
      expect(await panel.locator('[data-field="Log group"] dd').textContent()).toContain('/aws/lambda/mcp-gateway-prod');
      expect(await panel.locator('[data-field="Log stream"] dd').textContent()).toContain('[$LATEST]4f6a9c1e');
      expect(await panel.locator('#event-raw-message').textContent()).toBe(message);
      expect(await panel.locator('[data-field="Trace id"] dd').textContent()).toContain('1-67a2b3c4-0123456789abcdef01234567');
      expect(await panel.locator('[data-field="Action"] dd').textContent()).toBe('deny');
      expect(await panel.locator('[data-field="Time"] dd').textContent()).toMatch(/UTC[+-]\d\d:\d\d/);
      // The whole metadata, pretty, is the API's.
      expect(JSON.parse((await panel.locator('#event-metadata').textContent()) as string)).toEqual(stored.metadata);
      // Neighbours in the session (its creation, the call before and the one after), the event itself marked.
      const session = await allOf(new URLSearchParams({ sessionId: 'sess-42' }));
      expect(session).toHaveLength(4);
      await expect.poll(() => panel.locator('#event-neighbours li').evaluateAll((lis) => lis.map((li) => Number((li as HTMLElement).dataset.seq))), { timeout: 10_000 }).toEqual(session);
      expect(await panel.locator('#event-neighbours li.current').getAttribute('data-seq')).toBe(String(stored.seq));
      // The URL names the event: a reload opens it again.
      await expect.poll(() => page.evaluate(() => location.hash)).toContain(`event=${stored.seq}`);
      if (width === 1280) await page.screenshot({ path: `${SHOTS}/explore-detail-1280.png` });
      else await page.screenshot({ path: `${SHOTS}/explore-detail-390.png` });
      await page.reload();
      await panel.locator('#event-raw-message').waitFor({ timeout: 20_000 });
      // Same trace: free text over the trace id, an hour either side.
      await panel.locator('a[data-filter="trace"]').click();
      await expect.poll(() => shownSeqs(page), { timeout: 15_000 }).toEqual([stored.seq]);
      expect(await page.inputValue('#explore-q')).toBe('1-67a2b3c4-0123456789abcdef01234567');
      await page.locator('#explore-body tr').first().click();
      await panel.locator('a[data-filter="session"]').click();
      await expect.poll(() => page.inputValue('#explore-sessionId')).toBe('sess-42');
      await expect.poll(() => shownSeqs(page), { timeout: 15_000 }).toEqual(session);
      expect(await panel.isVisible()).toBe(false); // a filter link gives the results the screen
      await page.locator('#explore-body tr').first().click();
      await panel.locator('#event-metadata').waitFor();
      await page.click('#event-panel-close');
      expect(await panel.isVisible()).toBe(false);
      await expect.poll(() => page.evaluate(() => location.hash)).not.toContain('event=');
    }
  });
});
