// Stream protection on both backends: slow consumers cut, connection limits, expiring logins, clean shutdown.
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, login, postEvents, startApp, toolCall } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse, seqs, strictlyIncreasing } from '../helpers/sse.js';

describe.each(backendNames)('stream protection (%s)', (backendName) => {
  const { app, backend } = suiteApp(backendName, { SSE_BUFFER_LIMIT_BYTES: '65536', SSE_MAX_STREAMS_PER_KEY: '2', SSE_MAX_STREAMS_PER_USER: '2', AUTH_RECHECK_MS: '100', SSE_REPLAY_LIMIT: '100000', ANOMALY_MIN_RATE: '1000000000' });

  it('disconnects a client that stops reading while the others keep up, and it resumes by id with nothing lost', async () => {
    const org = await createOrg(app.url);
    const cookie = await login(app.url, org.email, org.password);
    const slow = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const fast = await openSse(`${app.url}/api/v1/events`, { cookie });
    slow.pause();
    const long = 'x'.repeat(190);
    let total = 0;
    for (let i = 0; i < 4; i++) {
      const batch = Array.from({ length: 4000 }, (_, j) => toolCall(i * 4000 + j, { serverId: `s-${long}`, toolName: `t-${long}`, sessionId: null }));
      total += (await postEvents(app.url, org.key, batch)).body.accepted;
    }
    await fast.waitFor((c) => c.events.filter((e) => e.event === 'tool_call').length >= total, 60_000, `${total} tool calls`);
    expect(strictlyIncreasing(seqs(fast))).toBe(true);
    // The paused client was cut on the server side; metrics count it.
    await expect.poll(async () => (await (await fetch(`${app.url}/metrics`)).text()).match(/audit_stream_sse_slow_client_disconnects_total (\d+)/)?.[1]).toBe('1');
    slow.close();
    const resumeFrom = Number(slow.lastEventId() ?? '0');
    const expected = seqs(fast).filter((x) => x > resumeFrom);
    expect(expected.length).toBeGreaterThan(0);
    const resumed = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': String(resumeFrom) });
    await resumed.waitForCount(expected.length, 60_000);
    expect(seqs(resumed)).toEqual(expected);
    resumed.close();
    fast.close();
  });

  it('bounds replay: an id older than the window gets a reset comment and the most recent window', async () => {
    const small = await startApp({ ...(await backend.sibling()), SSE_REPLAY_LIMIT: '50', ANOMALY_MIN_RATE: '1000000000' });
    try {
      const org = await createOrg(small.url);
      await postEvents(small.url, org.key, Array.from({ length: 120 }, (_, i) => toolCall(i)));
      const c = await openSse(`${small.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': '10' });
      await c.waitForCount(50);
      expect(c.comments.some((t) => t.startsWith('reset:'))).toBe(true);
      expect(seqs(c)[0]).toBe(71);
      expect(seqs(c)[49]).toBe(120);
      c.close();
    } finally {
      await small.close();
    }
  });

  it('refuses streams over the per-key limit with 429 and Retry-After', async () => {
    const org = await createOrg(app.url);
    const s1 = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const s2 = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const s3 = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    expect([s1.status, s2.status]).toEqual([200, 200]);
    expect(s3.status).toBe(429);
    expect(s3.headers.get('retry-after')).toBe('5');
    expect(JSON.parse(s3.body!)).toMatchObject({ statusCode: 429, code: 'too_many_requests' });
    s1.close();
    await s1.ended;
    // The slot frees once the server notices the close.
    await expect
      .poll(async () => {
        const s = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
        s.close();
        return s.status;
      })
      .toBe(200);
    s2.close();
  });

  it('refuses streams over the per-user limit with 429, however many times the user signed in', async () => {
    const org = await createOrg(app.url);
    const [a, b] = [await login(app.url, org.email, org.password), await login(app.url, org.email, org.password)];
    const s1 = await openSse(`${app.url}/api/v1/events`, { cookie: a });
    const s2 = await openSse(`${app.url}/api/v1/events`, { cookie: b });
    const s3 = await openSse(`${app.url}/api/v1/events`, { cookie: a });
    const s4 = await openSse(`${app.url}/api/v1/events`, { cookie: b });
    expect([s1.status, s2.status, s3.status, s4.status]).toEqual([200, 200, 429, 429]);
    expect(s3.headers.get('retry-after')).toBe('5');
    expect(JSON.parse(s3.body!)).toMatchObject({ statusCode: 429, code: 'too_many_requests', message: 'too many open streams for this user' });
    // The organization's key is not held back by its user's streams.
    const k = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    expect(k.status).toBe(200);
    for (const s of [s1, s2, k]) s.close();
  });

  it('closes the stream of a login session that expired, and of one that signed out', async () => {
    const org = await createOrg(app.url);
    const cookie = await login(app.url, org.email, org.password);
    const c = await openSse(`${app.url}/api/v1/events`, { cookie });
    expect(c.status).toBe(200);
    await app.ctx.db.query("UPDATE login_sessions SET expires_at = now() - interval '1 second'");
    await c.ended;
    expect(c.comments.some((t) => t.includes('expired'))).toBe(true);

    const cookie2 = await login(app.url, org.email, org.password);
    const d = await openSse(`${app.url}/api/v1/events`, { cookie: cookie2 });
    expect(d.status).toBe(200);
    const out = await http(`${app.url}/api/v1/auth/logout`, { method: 'POST', headers: { cookie: cookie2, origin: app.url } });
    expect(out.status).toBe(204);
    await d.ended;
    expect((await openSse(`${app.url}/api/v1/events`, { cookie: cookie2 })).status).toBe(401);
  });

  it('ends every stream cleanly on shutdown so clients can resume elsewhere', async () => {
    const other = await startApp(await backend.sibling());
    const org = await createOrg(other.url);
    const c = await openSse(`${other.url}/api/v1/events`, bearer(org.key));
    await postEvents(other.url, org.key, [toolCall(1)]);
    await c.waitForCount(1);
    await other.close();
    await c.ended;
    expect(c.comments.some((t) => t.includes('shutting down'))).toBe(true);
  });
});
