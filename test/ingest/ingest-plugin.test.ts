// The ingest plugin with a source of its own (bytes, a prefix, two paths, its own answers): what a new source relies on.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppContext } from '../../src/app.js';
import { createAuthRepo } from '../../src/auth/auth-repo.js';
import { createAuthenticator } from '../../src/auth/authenticate.js';
import { testConfig } from '../../src/config.js';
import { ingestPlugin } from '../../src/ingest/ingest-plugin.js';
import type { IngestSource } from '../../src/ingest/ingest-source.js';
import { InvalidInput, RateLimited } from '../../src/shared/domain-errors.js';
import { MIN_EVENT_BYTES, TRUNCATED } from '../../src/shared/event-cost.js';
import { makeBackend, type Backend } from '../helpers/backends.js';
import { ADMIN_TOKEN, bearer, createOrg, type TestOrg } from '../helpers/app.js';
import { ingestedEvents } from './ingest-kit.js';

const BODY_LIMIT = 4096;

/**
 * One event per line `<id> <tool>` (`<id> <tool> big`: with 1 MiB of metadata); `#` lines are accepted, not stored; `-`
 * lines are empty entries; `busy` is a 429; anything else a 400.
 */
const probe: IngestSource = {
  name: 'raw',
  prefix: '/probe',
  paths: ['/v1/a', '/v1/b'],
  summary: 'A probe source of this test',
  accepts: { 'application/x-protobuf': 'bytes', 'application/json': 'bytes' },
  idempotency: false,
  toEvents(body, ctx) {
    if (!Buffer.isBuffer(body)) throw new Error('expected the body as a Buffer');
    const lines = body.toString('utf8').split('\n').filter(Boolean);
    if (lines.includes('busy')) throw new RateLimited('busy now', 7);
    const kept = lines.filter((l) => !l.startsWith('#') && l !== '-');
    const events = kept.map((line) => {
      const m = /^(\S+) (\S+)( big)?$/.exec(line);
      if (!m) throw new InvalidInput('not a probe line', [{ path: line.slice(0, 20), message: 'expected "<id> <tool>"' }]);
      const metadata = m[3] ? { blob: 'x'.repeat(1024 * 1024), note: 'kept' } : {};
      return { type: 'tool_call' as const, source: 'raw' as const, occurredAt: ctx.receivedAt, serverId: ctx.path, toolName: m[2], metadata, dedupeKey: `probe:${m[1]}` };
    });
    const empty = lines.filter((l) => l === '-').length;
    return { events, notStored: lines.filter((l) => l.startsWith('#')).length, empty, info: { path: ctx.path } };
  },
  answer(result, ctx) {
    const text = `ok ${result.accepted} ${result.duplicates} ${result.notStored} ${(result.info as { path: string }).path}`;
    return ctx.contentType === 'application/x-protobuf' ? { body: Buffer.from(text), contentType: 'application/x-protobuf' } : { body: { text } };
  },
  formatError(error, ctx) {
    const status = { code: error.statusCode, message: error.body.message };
    return ctx.contentType === 'application/x-protobuf' ? { body: Buffer.from(JSON.stringify(status)), contentType: 'application/x-protobuf' } : { body: status };
  },
};

describe('ingest plugin with a new source', () => {
  let backend: Backend;
  let ctx: AppContext;
  let url: string;
  let org: TestOrg;

  beforeAll(async () => {
    backend = await makeBackend('embedded');
    const config = testConfig({ ...backend.env, ADMIN_TOKEN, BODY_LIMIT_BYTES: String(BODY_LIMIT) });
    ctx = await buildApp(config);
    const auth = createAuthenticator(config, createAuthRepo(ctx.db));
    await ctx.app.register(ingestPlugin, { prefix: '/api/v1/ingest', sources: [probe], auth, eventLog: ctx.eventLog, metrics: ctx.metrics, bodyLimit: BODY_LIMIT, maxEntries: 10, eventCost: { maxEventBytes: MIN_EVENT_BYTES }, recognition: ctx.recognition });
    url = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
    org = await createOrg(url);
  });
  afterAll(async () => {
    await ctx?.app.close();
    await backend?.cleanup();
  });

  const send = (path: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${url}/api/v1/ingest/probe${path}`, { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'application/json', ...headers }, body: new Uint8Array(Buffer.from(body)) });

  it('hands toEvents the decoded bytes, stores once, and answers with the source hook in the request encoding', async () => {
    const r = await send('/v1/a', gzipSync('1 alpha\n# comment\n2 beta\n'), { 'content-encoding': 'gzip', 'content-type': 'application/x-protobuf' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/x-protobuf');
    expect(await r.text()).toBe('ok 2 0 1 /v1/a');
    const again = await send('/v1/b', '1 alpha\n');
    expect(await again.json()).toEqual({ text: 'ok 0 1 0 /v1/b' });
    const stored = await ingestedEvents(url, org.key);
    expect(stored.map((e) => [e.toolName, e.serverId])).toEqual([['alpha', '/v1/a'], ['beta', '/v1/a']]);
  });

  it('answers errors with the source hook: the status and Retry-After of the one mapping', async () => {
    const busy = await send('/v1/a', 'busy\n');
    expect(busy.status).toBe(429);
    expect(busy.headers.get('retry-after')).toBe('7');
    expect(await busy.json()).toEqual({ code: 429, message: 'busy now' });
    const bad = await send('/v1/a', 'nonsense', { 'content-type': 'application/x-protobuf' });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe('application/x-protobuf');
    expect(JSON.parse(await bad.text())).toEqual({ code: 400, message: 'not a probe line' });
    const big = await send('/v1/a', `1 ${'x'.repeat(BODY_LIMIT)}`);
    expect(big.status).toBe(413);
    const type = await send('/v1/a', '1 a', { 'content-type': 'text/plain' });
    expect(type.status).toBe(415);
    expect((await type.json()).message).toContain('send application/x-protobuf, application/json');
    const anonymous = await fetch(`${url}/api/v1/ingest/probe/v1/a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '1 a' });
    expect(anonymous.status).toBe(401);
    expect(await ingestedEvents(url, org.key)).toHaveLength(2);
  });

  it("bounds what any source's event may cost (INGEST_MAX_EVENT_BYTES): 1 MiB of metadata is cut with the marker", async () => {
    const r = await send('/v1/a', '3 gamma big\n-\n-\n');
    expect(await r.json()).toEqual({ text: 'ok 1 0 0 /v1/a' });
    const stored = (await ingestedEvents(url, org.key)).find((e) => e.toolName === 'gamma')!;
    expect(Buffer.byteLength(JSON.stringify(stored))).toBeLessThanOrEqual(MIN_EVENT_BYTES + 200);
    expect(stored.metadata.note).toBe('kept');
    expect(stored.metadata.blob.endsWith(TRUNCATED)).toBe(true);
  });

  it('counts the requests, the stored entries and the accepted-but-not-stored ones', async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    expect(text).toMatch(/audit_stream_ingest_events_total\{source="raw",outcome="not_stored"\} 1/);
    expect(text).toMatch(/audit_stream_ingest_events_total\{source="raw",outcome="empty"\} 2/);
    expect(text).toMatch(/audit_stream_ingest_requests_total\{source="raw",status="429"\} 1/);
  });
});
