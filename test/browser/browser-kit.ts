// Shared pieces of the browser tests: Debian's Chromium through playwright-core, signing in, and visibility checks.
import { existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const chromiumAvailable = existsSync(CHROMIUM);
export const SHOTS = 'test-results';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
  });
}

/** A page of its own context at the given width, signed in and live. */
export async function signedInPage(browser: Browser, base: string, email: string, password: string, width: number, height = 900): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  const page = await context.newPage();
  await page.goto(base);
  await page.fill('#login-email', email);
  await page.fill('#login-password', password);
  await page.click('#login-form button[type=submit]');
  await page.locator('#connection-state', { hasText: 'live' }).waitFor({ timeout: 20_000 });
  return page;
}

export interface Fit {
  text: string;
  /** The element's box lies within the viewport's width and within its container's box. */
  inViewport: boolean;
  inContainer: boolean;
  /** Nothing of the text is cut: scrollWidth/Height do not exceed clientWidth/Height, here and in its ancestors up to the container. */
  notClipped: boolean;
}

/** How `el` fits: inside the viewport, inside the closest `container` ancestor, and not clipped by overflow. */
export function fitOf(el: Locator, container: string): Promise<Fit> {
  return el.evaluate((node, sel) => {
    const e = node as HTMLElement;
    const box = e.getBoundingClientRect();
    const holder = e.closest(sel) as HTMLElement;
    const outer = holder.getBoundingClientRect();
    const within = (a: DOMRect, b: { left: number; right: number; top: number; bottom: number }) =>
      a.left >= b.left - 0.5 && a.right <= b.right + 0.5 && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5;
    // Every box from the element up to the container shows all its content: nothing overflows (scrollWidth beyond
    // clientWidth; inline boxes have neither) and no ellipsis cuts it.
    let notClipped = box.width > 0 && box.height > 0;
    for (let n: HTMLElement | null = e; n && n !== holder.parentElement; n = n.parentElement) {
      const style = getComputedStyle(n);
      if (n.clientWidth > 0 && n.scrollWidth > n.clientWidth + 1) notClipped = false;
      if (style.textOverflow === 'ellipsis' && n.scrollWidth > n.clientWidth) notClipped = false;
    }
    return {
      text: e.textContent ?? '',
      inViewport: box.left >= 0 && box.right <= window.innerWidth + 0.5,
      inContainer: within(box, outer),
      notClipped,
    };
  }, container);
}

/** Runs `npm run demo` against `url` with `key`; resolves with its output, rejects when it fails. */
export function runDemo(url: string, key: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn('npm', ['run', '--silent', 'demo', '--', '--key', key, '--url', url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (c) => (out += c));
    proc.stderr.on('data', (c) => (out += c));
    proc.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`npm run demo exited ${code}:\n${out}`))));
  });
}
