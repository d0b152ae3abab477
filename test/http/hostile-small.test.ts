// Small hostile-client cases against a real server: line breaks in SSE data, admin token before the body, request ids,
// hang-ups, HEAD on the stream, and the anomaly counters' key cap in Redis.
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendNames, realBackendAvailable, realBackend, type Backend } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, startApp, toolCall, type RunningApp } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

/** A stream read as raw text; `until` resolves once the text received so far satisfies a condition. */
async function rawStream(url: string, headers: Record<string, string>) {
  const ctrl = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: ctrl.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const waiters = new Set<() => void>();
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
        for (const w of [...waiters]) w();
      }
    } catch {
      /* aborted */
    }
  })();
  return {
    until(pred: (t: string) => boolean, timeoutMs = 20_000): Promise<string> {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pred(text)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(text);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`stream text never matched; got ${JSON.stringify(text.slice(-500))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    close: () => ctrl.abort(),
  };
}

/** Log lines (parsed) captured from an app since `from`. */
function logLines(app: RunningApp, from = 0): Record<string, unknown>[] {
  return app.logs
    .slice(from)
    .join('')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe.each(backendNames)('hostile clients, small cases (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000' });

  it('escapes U+2028, U+2029 and U+0085 in data lines: a line-splitting client sees one data line, not forged fields', async () => {
    const org = await createOrg(app.url);
    const marker = `m${randomBytes(4).toString('hex')}`;
    const toolName = `${marker}\u2028event: forged\u2029id: 999999\u0085data: {"x":1}`;
    const stream = await rawStream(`${app.url}/api/v1/events`, bearer(org.key));
    // The stream is live once its retry line has arrived; the event is posted after that.
    await stream.until((t) => t.includes('retry:'));
    expect((await postEvents(app.url, org.key, [toolCall(1, { toolName })])).status).toBe(200);
    const text = await stream.until((t) => t.includes(marker) && t.slice(t.indexOf(marker)).includes('\n\n'));
    stream.close();
    expect(text).toContain(marker);
    expect(text).not.toMatch(/[\u2028\u2029\u0085]/);
    // A client that splits lines on every Unicode line break (as some do) still sees exactly one event, unchanged.
    const frame = text.slice(text.lastIndexOf('\n\n', text.indexOf(marker)) + 2, text.indexOf('\n\n', text.indexOf(marker)));
    const lines = frame.split(/\r\n|\r|\n|\u2028|\u2029|\u0085/);
    expect(lines.filter((l) => l.startsWith('id:'))).toHaveLength(1);
    expect(lines.filter((l) => l.startsWith('event:'))).toEqual(['event: tool_call']);
    const data = lines.filter((l) => l.startsWith('data:'));
    expect(data).toHaveLength(1);
    expect(JSON.parse(data[0].slice(5)).toolName).toBe(toolName);
  });

  it('admin routes check the token before reading the body: no token and a malformed body is a 401, not a 400', async () => {
    for (const path of ['/api/v1/admin/organizations', `/api/v1/admin/organizations/${crypto.randomUUID()}/users`]) {
      const r = await http(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[[[[{"unterminated' });
      expect(r.status, path).toBe(401);
      expect(r.body.code).toBe('unauthorized');
    }
  });

  it('takes X-Request-Id only when short and plain; any other id is replaced by a generated one in the logs', async () => {
    const from = app.logs.length;
    const good = `req-${randomBytes(6).toString('hex')}`;
    const long = `long${'x'.repeat(2000)}`;
    const odd = `evil id with spaces ${randomBytes(4).toString('hex')}`;
    for (const id of [good, long, odd]) expect((await fetch(`${app.url}/healthz`, { headers: { 'x-request-id': id } })).status).toBe(200);
    const ids = logLines(app, from).map((l) => String(l.reqId ?? ''));
    expect(ids).toContain(good);
    expect(ids.some((id) => id.includes('xxxxxxxxxx'))).toBe(false);
    expect(ids.some((id) => id.includes('evil'))).toBe(false);
    for (const id of ids.filter((i) => i && i !== good)) expect(id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs a client that hangs up mid-body at info level, without a stack, and is not mistaken for a storage outage', async () => {
    const org = await createOrg(app.url);
    const from = app.logs.length;
    const port = Number(new URL(app.url).port);
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write(`POST /api/v1/ingest/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[{"serverId":"a",`);
    await expect.poll(() => app.logs.slice(from).join('').includes('"url":"/api/v1/ingest/events"'), { timeout: 10_000 }).toBe(true);
    socket.destroy();
    await expect.poll(() => logLines(app, from).some((l) => l.code === 'client_closed_request'), { timeout: 10_000 }).toBe(true);
    const lines = logLines(app, from);
    expect(lines.filter((l) => Number(l.level) >= 40)).toEqual([]);
    expect(JSON.stringify(lines)).not.toContain('"stack"');
  });

  it('answers HEAD /api/v1/events at once with the stream headers, without opening a stream', async () => {
    const org = await createOrg(app.url);
    const r = await fetch(`${app.url}/api/v1/events`, { method: 'HEAD', headers: bearer(org.key), signal: AbortSignal.timeout(10_000) });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(app.ctx.hub.stats().connections).toBe(0);
    expect((await fetch(`${app.url}/api/v1/events`, { method: 'HEAD', signal: AbortSignal.timeout(10_000) })).status).toBe(401);
  });
});

describe.runIf(realBackendAvailable)('anomaly counters in Redis are capped (ANOMALY_MAX_KEYS)', () => {
  let backend: Backend;
  let app: RunningApp;
  let redis: Redis;

  beforeAll(async () => {
    backend = await realBackend();
    app = await startApp({ ...backend.env, ANOMALY_MAX_KEYS: '50', ANOMALY_MIN_RATE: '1000000000' });
    redis = new Redis(process.env.TEST_REDIS_URL!);
  });
  afterAll(async () => {
    await app?.close();
    const keys = await redis.keys(`${backend.env.REDIS_PREFIX}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await backend?.cleanup();
  });

  it('1,000 distinct tools leave at most 50 keys’ counters in Redis', async () => {
    const org = await createOrg(app.url);
    const calls = Array.from({ length: 1000 }, (_, i) => toolCall(i, { toolName: `tool-${i}`, sessionId: null }));
    expect((await postEvents(app.url, org.key, calls)).body.accepted).toBe(1000);
    // Detection runs after commit, in commit order: once the last request's key is counted, the first one's are too.
    expect((await postEvents(app.url, org.key, [toolCall(0, { toolName: 'last-one', sessionId: null })])).status).toBe(200);
    const prefix = backend.env.REDIS_PREFIX;
    await expect.poll(async () => (await redis.keys(`${prefix}anomaly:*last-one*`)).length, { timeout: 20_000 }).toBeGreaterThan(0);
    const counters = await redis.keys(`${prefix}anomaly*`);
    console.log(`anomaly keys in Redis after 1,001 distinct tools with ANOMALY_MAX_KEYS=50: ${counters.length}`);
    expect(counters.length).toBeLessThanOrEqual(50 * 3 + 1);
  });
});
