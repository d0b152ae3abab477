// Login limits on both backends: one email normalization for limiter, lookup and creation; a limit per client address;
// a bound on password hashing in progress.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { ADMIN_TOKEN, http, startApp } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const fullwidth = (s: string) => s.replace(/[a-z]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0x61 + 0xff41));

describe.each(backendNames)('login limits (%s)', (backendName) => {
  const { app, backend } = suiteApp(backendName, { LOGIN_RATE_LIMIT_MAX: '3', TRUST_PROXY: 'true' });

  async function newUser(email: string, password = `pw-${randomBytes(6).toString('hex')}`): Promise<{ status: number; email: string; password: string }> {
    const org = await http(`${app.url}/api/v1/admin/organizations`, { method: 'POST', headers: admin, json: { name: 'Login limits' } });
    const user = await http(`${app.url}/api/v1/admin/organizations/${org.body.id}/users`, { method: 'POST', headers: admin, json: { email, password, role: 'admin' } });
    return { status: user.status, email: user.body?.email, password };
  }

  /** Every attempt from its own address, so only the per-email limit is in play. */
  const attempt = (email: string, password: string) =>
    http(`${app.url}/api/v1/auth/login`, { method: 'POST', headers: { 'x-forwarded-for': '198.51.100.9' }, json: { email, password } });

  it('after a lock-out, no case or compatibility spelling of the email signs in: each counts against the same account or matches none', async () => {
    const tag = randomBytes(4).toString('hex').replace(/\d/g, 'k');
    const email = `admin.k${tag}@example.test`;
    const u = await newUser(email);
    expect(u.status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await attempt(email, `wrong-${i}`)).status).toBe(401);
    // Spellings that are another address under the one normalization match no account: never a sign-in, never a bypass.
    const other = [email.replace('admin', 'adm\u0130n'), email.replace('admin', 'ADM\u0130N'), email.replace('admin', 'adm\u0131n')];
    for (const v of other) {
      const r = await attempt(v, u.password);
      expect(r.status, JSON.stringify(v)).not.toBe(200);
      expect([401, 429], JSON.stringify(v)).toContain(r.status);
    }
    // Spellings that name this account share its limit, whatever form they take: locked, even with the right password.
    const same = [
      email.toUpperCase(),
      `  ${email}\t`,
      fullwidth(email),
      email.replace('k', '\u212a'), // KELVIN SIGN, NFKC → K
      email.replace('@', '\ufe6b'), // SMALL COMMERCIAL AT, NFKC → @
    ];
    for (const v of same) expect((await attempt(v, u.password)).status, JSON.stringify(v)).toBe(429);
  });

  it('user creation stores the normalized email, and signs in under any spelling of it; non-ASCII addresses are refused', async () => {
    const tag = randomBytes(4).toString('hex').replace(/\d/g, 'q');
    const created = await newUser(`  ${fullwidth(`bob${tag}`)}@Example.TEST `);
    expect(created.status).toBe(201);
    expect(created.email).toBe(`bob${tag}@example.test`);
    expect((await attempt(`BOB${tag.toUpperCase()}@EXAMPLE.test`, created.password)).status).toBe(200);
    // The same address again is the existing user (joins the new organization), not a second account.
    const again = await newUser(`Bob${tag}@example.TEST`);
    expect(again.status).toBe(201);
    expect(again.email).toBe(`bob${tag}@example.test`);
    expect((await newUser(`stra\u00dfe${tag}@example.test`)).status).toBe(400);
    expect((await newUser(`adm\u0130n${tag}@example.test`)).status).toBe(400);
    // 'ß' is not 'ss': an account "strasse…" is not reached by "straße…".
    const strasse = await newUser(`strasse${tag}@example.test`);
    expect((await attempt(`stra\u00dfe${tag}@example.test`, strasse.password)).status).toBe(401);
  });

  it('limits attempts per client address whatever the email (LOGIN_RATE_LIMIT_PER_ADDRESS_MAX), before reading the body', async () => {
    const perAddress = await startApp({ ...(await backend.sibling()), LOGIN_RATE_LIMIT_PER_ADDRESS_MAX: '5', TRUST_PROXY: 'true' });
    try {
      const from = (ip: string, body: string) =>
        http(`${perAddress.url}/api/v1/auth/login`, { method: 'POST', headers: { 'x-forwarded-for': ip, 'content-type': 'application/json' }, body });
      const fresh = () => JSON.stringify({ email: `nobody-${randomBytes(4).toString('hex')}@example.test`, password: 'guess' });
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await from('203.0.113.50', fresh())).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401]);
      const limited = await from('203.0.113.50', fresh());
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ statusCode: 429, code: 'too_many_requests' });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      // Checked before the body: a malformed body from that address is refused the same way.
      expect((await from('203.0.113.50', '{"email":')).status).toBe(429);
      // Another address is not held back.
      expect((await from('203.0.113.51', fresh())).status).toBe(401);
    } finally {
      await perAddress.close();
    }
  });

  it('bounds password hashing in progress: beyond PASSWORD_HASH_QUEUE_MAX waiting, 503 with Retry-After, never a 5xx of another kind', async () => {
    const bounded = await startApp({ ...(await backend.sibling()), PASSWORD_HASH_CONCURRENCY: '1', PASSWORD_HASH_QUEUE_MAX: '2', TRUST_PROXY: 'true' });
    try {
      // 40 attempts at once, each from its own address with a fresh email: no rate limit applies, only the hashing bound.
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          http(`${bounded.url}/api/v1/auth/login`, {
            method: 'POST',
            headers: { 'x-forwarded-for': `192.0.2.${i + 1}` },
            json: { email: `fresh-${i}-${randomBytes(3).toString('hex')}@example.test`, password: 'guess' },
          }),
        ),
      );
      const statuses = results.map((r) => r.status);
      const busy = results.filter((r) => r.status === 503);
      console.log(`40 concurrent sign-ins, 1 hashing and 2 waiting at most: ${statuses.filter((s) => s === 401).length} × 401, ${busy.length} × 503`);
      expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
      expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(3);
      expect(busy.length).toBeGreaterThan(0);
      expect(busy[0].body).toMatchObject({ statusCode: 503, code: 'busy' });
      expect(busy[0].headers.get('retry-after')).toBe('1');
    } finally {
      await bounded.close();
    }
  });
});
