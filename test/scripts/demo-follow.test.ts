// `npm run demo -- --follow`: after the demo's history it keeps a realistic trickle going until it is stopped.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bearer, createOrg, http } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

describe('npm run demo -- --follow', () => {
  const { app } = suiteApp('embedded');

  it('keeps sending tool calls (and CloudWatch lines) after the demo, and stops cleanly on SIGINT', async () => {
    const org = await createOrg(app.url);
    const proc = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo.ts', '--key', org.key, '--url', app.url, '--follow', '--rate', '1200'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (c) => (out += c));
    proc.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    try {
      await expect.poll(() => out, { timeout: 60_000, interval: 200 }).toContain('Following: about 1200 tool calls a minute');
      const count = async () => (await http(`${app.url}/api/v1/audit-events/count?type=tool_call`, { headers: bearer(org.key) })).body.count as number;
      const atStart = await count();
      // The trickle goes on by itself: more calls arrive while the test only watches.
      await expect.poll(count, { timeout: 30_000, interval: 250 }).toBeGreaterThan(atStart + 20);
      const later = (await http(`${app.url}/api/v1/audit-events?type=tool_call&limit=1`, { headers: bearer(org.key) })).body.items[0];
      expect(Date.now() - Date.parse(later.occurredAt)).toBeLessThan(30_000); // stamped now, not history
    } finally {
      proc.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(out).toMatch(/Stopped: \d+ tool calls and \d+ CloudWatch lines sent while following/);
  }, 120_000);
});
