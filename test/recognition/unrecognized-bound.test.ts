// The unrecognized report keeps at most RECOGNITION_UNRECOGNIZED_MAX_NAMES rows per organization (plus one `(other)`
// per source) even when many requests with new names arrive at once; every record is still counted.
import { describe, expect, it } from 'vitest';
import { bearer, createOrg, http } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';

describe.each(backendNames)('unrecognized report bound under concurrent requests (%s backend)', (backendName) => {
  const { app } = suiteApp(backendName, { RECOGNITION_UNRECOGNIZED_MAX_NAMES: '250' });

  it('concurrent requests of new names fill the report up to its bound, the rest counted under (other)', async () => {
    const org = await createOrg(app.url);
    const requests = 20;
    const perRequest = 100;
    const send = (r: number) =>
      http(`${app.url}/api/v1/ingest/cloudwatch`, {
        method: 'POST',
        headers: bearer(org.key),
        json: { logGroup: `/g${r}`, logStream: 's', events: Array.from({ length: perRequest }, (_, i) => ({ timestamp: Date.now(), message: JSON.stringify({ event: `ev-${r}-${i}`, text: 'hello' }) })) },
      });
    const answers = await Promise.all(Array.from({ length: requests }, (_, r) => send(r)));
    expect(answers.map((a) => a.status)).toEqual(Array(requests).fill(200));
    const report = await http(`${app.url}/api/v1/recognition/unrecognized?limit=1000`, { headers: bearer(org.key) });
    const rows = report.body.items as { name: string; count: number }[];
    expect(rows.filter((x) => x.name !== '(other)').length).toBe(250);
    expect(rows.filter((x) => x.name === '(other)').length).toBe(1);
    expect(rows.reduce((n, x) => n + x.count, 0)).toBe(requests * perRequest);
  });
});
