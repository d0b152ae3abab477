// Every ingest route answers a wrong or missing Content-Type with the same 415 naming the types it accepts, storing nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadOtlpTypes } from '../../src/ingest/otlp/proto-types.js';
import { ingestSources } from '../../src/ingest/sources.js';
import { bearer, createOrg, http, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { ingestedEvents } from './ingest-kit.js';

const SOURCES = ingestSources({ firehoseMaxRecords: 500, otlp: { types: loadOtlpTypes(), maxSpans: 100, maxLogRecords: 100, maxMessages: 10_000 } });
const ROUTES = SOURCES.flatMap((s) => s.paths.map((p) => ({ source: s, url: `/api/v1/ingest${s.prefix ?? ''}${p}`, accepted: Object.keys(s.accepts) })));

/** Content types that some sender gets wrong, and a body of each (null: no Content-Type header at all). */
const WRONG: [string | null, string][] = [
  ['application/x-www-form-urlencoded', 'serverId=s&toolName=t'],
  ['text/plain', '{"serverId":"s","toolName":"t"}'],
  ['application/xml', '<event><serverId>s</serverId></event>'],
  ['text/xml', '<event/>'],
  ['multipart/form-data; boundary=x', '--x\r\n\r\n--x--'],
  [null, '{"serverId":"s","toolName":"t"}'],
  [null, ''],
];

describe('Content-Type on every ingest route', () => {
  const { app } = suiteApp('embedded');
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  it('covers every source, the four first ones included', () => {
    expect(ROUTES.map((r) => r.url)).toEqual(expect.arrayContaining(['/api/v1/ingest/cloudwatch', '/api/v1/ingest/datadog', '/api/v1/ingest/events', '/api/v1/ingest/firehose']));
  });

  for (const route of ROUTES) {
    it(`${route.url} answers 415 naming ${route.accepted.join(', ')}`, async () => {
      const auth = route.source.keyHeader ? { [route.source.keyHeader]: org.key } : bearer(org.key);
      let tried = 0;
      for (const [type, body] of WRONG) {
        if (type !== null && route.accepted.includes(type.split(';')[0])) continue;
        tried++;
        const headers: Record<string, string> = { ...auth };
        if (type !== null) headers['content-type'] = type;
        // Bytes, so that fetch adds no Content-Type of its own.
        const r = await http(`${app.url}${route.url}`, { method: 'POST', headers, body: new Uint8Array(Buffer.from(body)) });
        const what = `${route.url} ${type ?? '(none)'} ${body ? 'with' : 'without'} a body`;
        expect(r.status, what).toBe(415);
        // Sources with their own error shape (Firehose: errorMessage; OTLP: a google.rpc.Status in protobuf, whose
        // message field is the UTF-8 text inside the bytes) keep it; the others answer the one error shape.
        const message: string = typeof r.body === 'string' ? r.body : (r.body.errorMessage ?? r.body.message);
        if (route.source.name === 'otlp') expect(r.headers.get('content-type'), what).toBe('application/x-protobuf');
        if (!route.source.formatError) expect(r.body, what).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type', code: 'unsupported_media_type' });
        expect(message, what).toContain(`Content-Type ${type === null ? '(none)' : type.split(';')[0]} is not accepted here`);
        for (const accepted of route.accepted) expect(message, what).toContain(accepted);
      }
      expect(tried).toBeGreaterThanOrEqual(4);
    });
  }

  it('stored nothing', async () => {
    expect(await ingestedEvents(app.url, org.key)).toEqual([]);
  });
});
