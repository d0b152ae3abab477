// The dashboard's MCP proxy screen in a real Chromium: an admin sees the servers (secrets hidden) and rules, adds a
// rule, dry-runs a call against it and removes it.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, SHOTS, signedInPage } from '../browser/browser-kit.js';
import { suiteApp } from '../helpers/suite-app.js';
import { PROXY_ENV, proxyOrg, registerServer } from './proxy-helpers.js';

describe.skipIf(!chromiumAvailable)('dashboard: the MCP proxy screen', () => {
  const { app } = suiteApp('embedded', PROXY_ENV);
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('registers a server with a secret header, lists it with the secret hidden, adds a rule, dry-runs a call, removes both', async () => {
    const org = await proxyOrg(app.url);
    await registerServer(app.url, org, 'other', 'https://other.example.com/mcp');
    const page = await signedInPage(browser, app.url, org.email, org.password, 1280);
    await page.click('#nav-proxy');
    await page.locator('#proxy-servers-body tr[data-server-id="other"]').waitFor();
    await page.fill('#proxy-server-id', 'github');
    await page.fill('#proxy-server-url', 'https://mcp.example.com/mcp');
    await page.fill('#proxy-server-header', 'Authorization');
    await page.fill('#proxy-server-secret', 'Bearer very-secret');
    await page.click('#proxy-server-form button[type="submit"]');
    await page.locator('#proxy-servers-body tr[data-server-id="github"]').waitFor();
    const serverRow = await page.locator('#proxy-servers-body').innerText();
    expect(serverRow).toContain('/mcp/github');
    expect(serverRow).toContain('Authorization: ••••');
    expect(await page.content()).not.toContain('very-secret');

    await page.fill('#proxy-rule-name', 'no system files');
    await page.fill('#proxy-rule-condition', 'has(args.path) && args.path.startsWith("/etc/")');
    await page.selectOption('#proxy-rule-action', 'deny');
    await page.fill('#proxy-rule-reason', 'system files are off limits');
    await page.click('#proxy-rule-form button[type="submit"]');
    await page.locator('#proxy-rules-body tr[data-rule-id]').waitFor();
    expect(await page.locator('#proxy-rules-body').innerText()).toContain('no system files');

    await page.fill('#proxy-dry-server', 'github');
    await page.fill('#proxy-dry-tool', 'read_file');
    await page.fill('#proxy-dry-args', '{"path":"/etc/shadow"}');
    await page.click('#proxy-dry-run-form button[type="submit"]');
    await expect.poll(() => page.locator('#proxy-dry-run-result').innerText()).toContain('deny by "no system files": system files are off limits');
    await page.screenshot({ path: `${SHOTS}/proxy-screen.png`, fullPage: true });

    await page.click('#proxy-rules-body button[data-delete-rule]');
    await page.locator('#proxy-rules-body tr[data-rule-id]').waitFor({ state: 'detached' });
    await page.click('#proxy-servers-body button[data-delete-server="other"]');
    await page.locator('#proxy-servers-body tr[data-server-id="other"]').waitFor({ state: 'detached' });
    await page.close();
  });
});
