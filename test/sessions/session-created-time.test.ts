// A new session's statusChangedAt is the timestamp of the session_update (created) that announced it, to the millisecond.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';

describe.each(backendNames)('session creation time (%s)', (name) => {
  const { app } = suiteApp(name);
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  it('gives each new session the statusChangedAt of its streamed session_update', async () => {
    const client = await openSse(`${app.url}/api/v1/events?types=session_update`, bearer(org.key));
    // Sessions created in one request and in a later one; calls stamped in the past, so only the creation time can match.
    const past = new Date(Date.now() - 3_600_000).toISOString();
    await postEvents(app.url, org.key, [toolCall(1, { sessionId: 'born-1', timestamp: past }), toolCall(2, { sessionId: 'born-2', timestamp: past })]);
    await postEvents(app.url, org.key, [toolCall(3, { sessionId: 'born-3', timestamp: past })]);
    await client.waitForCount(3);
    client.close();
    for (const e of client.events) {
      const s = await http(`${app.url}/api/v1/sessions/${e.json.sessionId}`, { headers: bearer(org.key) });
      expect(s.status).toBe(200);
      expect(s.body.statusChangedAt).toBe(e.json.timestamp);
      expect(s.body.firstSeenAt).toBe(past);
    }
  });
});
