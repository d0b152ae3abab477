// How events are stored compactly (migration 006), both backends: no stored payload for tool calls, digests for
// dedupe keys, none for entries without an identity, and a stream that sends exactly what it sent live.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, postEvents, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';

interface StoredRow {
  seq: number;
  type: string;
  payload: unknown;
  key_bytes: number | null;
}

describe.each(backendNames)('compact storage of events (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000' });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  const stored = async (): Promise<StoredRow[]> =>
    (
      await app.ctx.db.query<StoredRow>(
        `SELECT seq::int AS seq, type, payload, octet_length(dedupe_key) AS key_bytes FROM audit_events e
         JOIN organizations o ON o.id = e.org_id WHERE o.name = $1 ORDER BY seq`,
        [org.name],
      )
    ).rows;

  it('replays every event with the very data line it had live, though tool calls keep no stored payload', async () => {
    const live = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const events = [
      { id: 'evt-1', serverId: 'srv-a', sessionId: 'sess-c', toolName: 'search', action: 'allow', latencyMs: 42, timestamp: '2026-01-02T03:04:05.678Z' },
      { serverId: 'srv-a', toolName: 'fetch' },
      { id: 'evt-3', serverId: 'srv-b', sessionId: 'sess-c', toolName: 'write \u2028 "quoted"', action: 'deny', timestamp: '2026-01-02T03:04:06Z' },
    ];
    expect((await postEvents(app.url, org.key, events)).body).toEqual({ accepted: 3, duplicates: 0 });
    await live.waitForCount(4); // the session's creation, then the three calls
    live.close();

    const replay = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': '0' });
    await replay.waitForCount(4);
    replay.close();
    expect(replay.events.map((e) => [e.id, e.event, e.data])).toEqual(live.events.map((e) => [e.id, e.event, e.data]));

    const rows = await stored();
    const calls = rows.filter((r) => r.type === 'tool_call');
    expect(calls).toHaveLength(3);
    expect(calls.map((r) => r.payload)).toEqual([null, null, null]);
    expect(rows.find((r) => r.type === 'session_update')?.payload).toMatchObject({ type: 'session_update', sessionId: 'sess-c' });
  });

  it('stores a sender-given identity as a 16-byte digest that still deduplicates, and none for an event without one', async () => {
    const before = (await stored()).length;
    const once = { serverId: 'srv-d', toolName: 'no_identity' };
    const first = await postEvents(app.url, org.key, [{ id: 'evt-long-' + 'x'.repeat(190), serverId: 'srv-d', toolName: 'long_id' }, once]);
    expect(first.body).toEqual({ accepted: 2, duplicates: 0 });
    // A retry of the identified event is a duplicate; the same call without an identity is a new record.
    const retry = await postEvents(app.url, org.key, [{ id: 'evt-long-' + 'x'.repeat(190), serverId: 'srv-d', toolName: 'long_id' }, once]);
    expect(retry.body).toEqual({ accepted: 1, duplicates: 1 });
    expect((await postEvents(app.url, org.key, { id: 'evt-1', serverId: 'srv-a', toolName: 'search' })).body).toEqual({ accepted: 0, duplicates: 1 });

    const added = (await stored()).slice(before);
    expect(added.map((r) => r.key_bytes)).toEqual([16, null, null]);
  });
});
