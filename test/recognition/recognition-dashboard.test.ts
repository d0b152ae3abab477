// The dashboard's recognition screen in a real Chromium: an admin sees what was not recognized (by name, with a
// sample) and the built-in profiles, adds a profile of their own and removes it.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumAvailable, launchChromium, SHOTS, signedInPage } from '../browser/browser-kit.js';
import { bearer, createOrg, http } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

describe.skipIf(!chromiumAvailable)('dashboard: the recognition screen', () => {
  const { app } = suiteApp('embedded');
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('shows unrecognized records and the profiles, adds a profile and removes it', async () => {
    const org = await createOrg(app.url);
    const sent = await http(`${app.url}/api/v1/ingest/cloudwatch`, { method: 'POST', headers: bearer(org.key), json: { logGroup: '/acme/runner', logStream: 's', events: [{ message: 'job 42 finished', timestamp: Date.now() }] } });
    expect(sent.status).toBe(200);
    const page = await signedInPage(browser, app.url, org.email, org.password, 1280);
    await page.click('#nav-recognition');
    await expect.poll(() => page.locator('#recognition-unrecognized-body').innerText()).toContain('/acme/runner');
    expect(await page.locator('#recognition-unrecognized-body').innerText()).toContain('job 42 finished');
    await page.locator('#recognition-profiles-body tr[data-profile-id="claude-code"]').waitFor();

    await page.fill('#recognition-profile-json', JSON.stringify({ id: 'acme-runner', when: "logGroup == '/acme/runner'", fields: { tool: "'job'" } }));
    await page.click('#recognition-profile-form button[type="submit"]');
    await page.locator('#recognition-profiles-body tr[data-profile-id="acme-runner"]').waitFor();
    await page.screenshot({ path: `${SHOTS}/recognition-screen.png`, fullPage: true });
    await page.click('#recognition-profiles-body button[data-delete-profile="acme-runner"]');
    await page.locator('#recognition-profiles-body tr[data-profile-id="acme-runner"]').waitFor({ state: 'detached' });
    await page.close();
  });
});
