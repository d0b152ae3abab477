// Request timeouts against a real server: trickled headers and bodies are cut with a 408; an answered stream lives on.
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, postEvents, toolCall } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';

interface Trickle {
  /** Bytes of the request sent before the server closed the connection. */
  sent: number;
  total: number;
  answer: string;
  ms: number;
}

/** Sends `head`, then `rest` one byte every `everyMs` (as a slow-loris client does), until done or the server hangs up. */
function trickle(port: number, head: string, rest: string, everyMs = 100): Promise<Trickle> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const socket = connect(port, '127.0.0.1');
    let sent = 0;
    let answer = '';
    let timer: NodeJS.Timeout | undefined;
    socket.on('data', (c) => (answer += c.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ sent, total: rest.length, answer, ms: Date.now() - t0 });
    });
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (sent >= rest.length || socket.destroyed) return clearInterval(timer);
        socket.write(rest[sent++]);
      }, everyMs);
    });
  });
}

describe.each(backendNames)('request timeouts (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { REQUEST_TIMEOUT_MS: '1000', HEADERS_TIMEOUT_MS: '1000', SSE_HEARTBEAT_MS: '100', ANOMALY_MIN_RATE: '1000000000' });
  let port: number;

  beforeAll(async () => {
    port = Number(new URL(app.url).port);
  });

  it('cuts a body trickled to the login and admin routes (no credentials needed) with a 408 JSON answer', async () => {
    const body = JSON.stringify({ email: 'someone@example.test', password: 'x'.repeat(150) });
    for (const path of ['/api/v1/auth/login', '/api/v1/admin/organizations']) {
      const r = await trickle(port, `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`, body);
      console.log(`${path}: trickled body cut after ${r.ms} ms, ${r.sent} of ${r.total} bytes sent`);
      expect(r.sent, path).toBeLessThan(r.total);
      // The admin route refuses at once (no token, checked before the body); the login route waits for its body, in vain.
      const status = path.includes('admin') ? 401 : 408;
      expect(r.answer, path).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(JSON.parse(r.answer.slice(r.answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ statusCode: status });
    }
  });

  it('the 408 has the JSON error shape', async () => {
    const r = await trickle(port, 'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n', '{'.repeat(100));
    expect(JSON.parse(r.answer.slice(r.answer.indexOf('\r\n\r\n') + 4))).toEqual({ statusCode: 408, error: 'Request Timeout', code: 'request_timeout', message: 'the request (headers and body) did not arrive in time' });
  });

  it('cuts headers trickled byte by byte', async () => {
    const r = await trickle(port, 'GET /healthz HTTP/1.1\r\n', `Host: x\r\nX-Slow: ${'y'.repeat(200)}\r\n\r\n`);
    expect(r.sent).toBeLessThan(r.total);
    expect(r.answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('a stream that has answered outlives the request timeout many times over, and keeps delivering', async () => {
    const org = await createOrg(app.url);
    const c = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    expect(c.status).toBe(200);
    const t0 = Date.now();
    // 40 heartbeats 100 ms apart: at least 4 s, four times the request timeout.
    await c.waitFor((s) => s.comments.filter((x) => x === 'heartbeat').length >= 40, 30_000, '40 heartbeats');
    expect(Date.now() - t0).toBeGreaterThan(3000);
    expect(c.isEnded()).toBe(false);
    expect((await postEvents(app.url, org.key, [toolCall(1)])).status).toBe(200);
    await c.waitForCount(1);
    c.close();
  });
});
