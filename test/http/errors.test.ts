// Every non-2xx is {statusCode, error, message, code}: Fastify's own errors, bad input, size and type limits, health.
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

describe.each(backendNames)('errors and health (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { BODY_LIMIT_BYTES: '65536', INGEST_MAX_ENTRIES: '5' });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  const post = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
    http(`${app.url}/api/v1/ingest/events`, { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'application/json', ...headers }, body: body as BodyInit });
  const shape = { statusCode: expect.any(Number), error: expect.any(String), message: expect.any(String), code: expect.any(String) };

  it('malformed JSON is 400', async () => {
    const r = await post('{"serverId": ');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ ...shape, code: 'invalid_json' });
  });

  it('a body over the limit is 413, also when it only grows that large once decompressed', async () => {
    const big = JSON.stringify({ serverId: 's', toolName: 't', metadata: { pad: 'x'.repeat(70_000) } });
    const r = await post(big);
    expect(r.status).toBe(413);
    expect(r.body).toMatchObject({ ...shape, code: 'payload_too_large' });
    const bomb = gzipSync(Buffer.from(JSON.stringify({ pad: ' '.repeat(10_000_000) })));
    expect(bomb.length).toBeLessThan(65536);
    const z = await post(bomb, { 'content-encoding': 'gzip' });
    expect(z.status).toBe(413);
  });

  it('invalid gzip is 400, an unknown encoding 415', async () => {
    expect((await post(Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' })).status).toBe(400);
    expect((await post('{}', { 'content-encoding': 'br' })).status).toBe(415);
  });

  it('too many entries is 413', async () => {
    const r = await post(JSON.stringify(Array.from({ length: 6 }, () => ({ serverId: 's', toolName: 't' }))));
    expect(r.status).toBe(413);
    expect(r.body.message).toContain('INGEST_MAX_ENTRIES');
  });

  it('an unsupported content type is 415', async () => {
    const r = await post('<xml/>', { 'content-type': 'application/xml' });
    expect(r.status).toBe(415);
    expect(r.body).toMatchObject({ ...shape, code: 'unsupported_media_type' });
  });

  it('unknown routes are 404 in the same shape', async () => {
    const r = await http(`${app.url}/api/v1/nothing-here`);
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ ...shape, statusCode: 404, code: 'not_found' });
  });

  it('invalid events are 400 with issue paths, and nothing of the request is stored', async () => {
    const r = await post(JSON.stringify([{ serverId: 'ok', toolName: 'ok' }, { serverId: 'ok', toolName: 'ok', latencyMs: -1, extra: 1, timestamp: '2024-13-45' }]));
    expect(r.status).toBe(400);
    const paths = r.body.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['1.latencyMs', '1.timestamp']));
    const stored = await http(`${app.url}/api/v1/audit-events`, { headers: bearer(org.key) });
    expect(stored.body.items).toEqual([]);
  });

  it('NDJSON bodies are accepted, and a bad line is named', async () => {
    const nd = '{"serverId":"s","toolName":"a"}\n\n{"serverId":"s","toolName":"b"}\n';
    const ok = await post(nd, { 'content-type': 'application/x-ndjson' });
    expect(ok.body).toEqual({ accepted: 2, duplicates: 0 });
    const bad = await post('{"serverId":"s","toolName":"a"}\n{oops', { 'content-type': 'application/x-ndjson' });
    expect(bad.status).toBe(400);
    expect(bad.body.issues[0].path).toBe('line 2');
  });

  it('text Postgres cannot store (\\u0000, unpaired surrogates) is stored, not a 500; absurd nesting is a 400', async () => {
    const r = await post(JSON.stringify({ serverId: 's\u0000x', toolName: 'nul\u0000tool', metadata: { 'k\u0000': 'v\u0000', lone: '\udc00', pair: '\ud83d\ude00' } }));
    expect(r.status).toBe(200);
    const stored = await http(`${app.url}/api/v1/audit-events?toolName=${encodeURIComponent('nul\uFFFDtool')}`, { headers: bearer(org.key) });
    expect(stored.body.items[0].metadata).toMatchObject({ 'k\uFFFD': 'v\uFFFD', lone: '\uFFFD', pair: '\ud83d\ude00' });
    const deep = '{"a":'.repeat(5_000) + '1' + '}'.repeat(5_000);
    const d = await post(`{"serverId":"s","toolName":"t","metadata":${deep}}`);
    expect(d.status).toBe(400);
    expect((await http(`${app.url}/readyz`)).status).toBe(200);
  });

  it('refuses raw metadata nested past its limit (32) and log bodies past theirs (64) with a 400 naming the problem', async () => {
    const nest = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
    expect((await post(`{"serverId":"s","toolName":"depth-ok","metadata":${nest(32)}}`)).status).toBe(200);
    const deepMeta = await post(`{"serverId":"s","toolName":"t","metadata":${nest(33)}}`);
    expect(deepMeta.status).toBe(400);
    expect(deepMeta.body.issues).toEqual([{ path: 'metadata', message: 'metadata must not nest deeper than 32 levels' }]);
    const deepBody = await http(`${app.url}/api/v1/ingest/cloudwatch`, { method: 'POST', headers: { ...bearer(org.key), 'content-type': 'application/json' }, body: `[${nest(64)}]` });
    expect(deepBody.status).toBe(400);
    expect(deepBody.body).toMatchObject({ code: 'invalid_json', message: 'body nests arrays or objects deeper than 64 levels' });
  });

  it('healthz, readyz, metrics and openapi answer', async () => {
    expect((await http(`${app.url}/healthz`)).body).toEqual({ status: 'ok' });
    expect((await http(`${app.url}/readyz`)).body).toMatchObject({ status: 'ready', checks: { database: 'ok', bus: 'ok' } });
    const m = await fetch(`${app.url}/metrics`);
    expect(m.headers.get('content-type')).toContain('text/plain');
    const text = await m.text();
    expect(text).toContain('audit_stream_ingest_events_total');
    expect(text).toContain('process_resident_memory_bytes');
    const doc = await http(`${app.url}/openapi.json`);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/api/v1/events', '/api/v1/ingest/cloudwatch', '/api/v1/ingest/datadog']));
  });
});
