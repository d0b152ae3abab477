// One rule for entries that carry nothing, on every log route and both backends: a few bytes of gzip holding thousands
// of blank lines store nothing; the entries are counted as `empty`, and their neighbours are stored as before.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, send as request, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { ingestedEvents } from './ingest-kit.js';

describe.each(backendNames)('empty entries (%s)', (backendName) => {
  const { app } = suiteApp(backendName, {}, {}, { inject: true });
  let org: TestOrg;

  const send = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    request(`${app.url}/api/v1/ingest${path}`, {
      method: 'POST',
      headers: { ...bearer(org.key), 'content-type': 'application/json', 'content-encoding': 'gzip', ...headers },
      body: new Uint8Array(gzipSync(JSON.stringify(body))),
    });
  const empties = async (source: string) => {
    const m = new RegExp(`audit_stream_ingest_events_total\\{source="${source}",outcome="empty"\\} (\\d+)`).exec(await (await request(`${app.url}/metrics`)).text());
    return m ? Number(m[1]) : 0;
  };

  it('cloudwatch: 5,000 blank lines store nothing and are counted; the line among them is stored', async () => {
    org = await createOrg(app.url);
    const now = new Date().toISOString();
    const events = Array.from({ length: 5_000 }, (_, i) => ({ timestamp: now, message: i % 2 ? '' : ' \n\t' }));
    events.splice(2_500, 0, { timestamp: now, message: 'tool=search action=allow' });
    const r = await send('/cloudwatch', { logGroup: 'g', logStream: 's', events });
    expect(await r.json()).toEqual({ accepted: 1, duplicates: 0 });
    expect(await empties('cloudwatch')).toBe(5_000);
    const stored = await ingestedEvents(app.url, org.key);
    expect(stored.map((e) => e.toolName)).toEqual(['search']);
  });

  it('firehose: empty records and blank log events inside a subscription payload store nothing and are counted', async () => {
    const before = (await ingestedEvents(app.url, org.key)).length;
    const payload = {
      messageType: 'DATA_MESSAGE',
      owner: '123456789012',
      logGroup: '/aws/lambda/blank',
      logStream: 's',
      subscriptionFilters: ['f'],
      logEvents: [...Array.from({ length: 1_000 }, (_, i) => ({ id: String(i), timestamp: 1714558800000, message: '' })), { id: 'kept', timestamp: 1714558800000, message: 'tool=lookup action=deny' }],
    };
    const records = [{ data: '' }, { data: gzipSync(JSON.stringify(payload)).toString('base64') }, { data: '  ' }];
    const r = await send('/firehose', { requestId: 'blank-1', timestamp: Date.now(), records }, { 'x-amz-firehose-access-key': org.key });
    expect(r.status).toBe(200);
    expect(await empties('firehose')).toBe(2 + 1_000);
    const stored = (await ingestedEvents(app.url, org.key)).slice(before);
    expect(stored.map((e) => [e.toolName, e.action])).toEqual([['lookup', 'deny']]);
  });
});
