// Retention of log batches' shared metadata (audit_contexts), both backends: a context goes once no kept event uses it;
// one first used by a removed event and used again by a kept one stays, and the kept events read whole.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { createOrg, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { postJson, storedEvents } from '../ingest/ingest-kit.js';

/** A subscription payload of `stream` with two entries whose ids start at `firstId`. */
function batch(stream: string, firstId: number) {
  return {
    messageType: 'DATA_MESSAGE',
    owner: '123456789012',
    logGroup: '/aws/lambda/retained',
    logStream: stream,
    subscriptionFilters: ['audit'],
    logEvents: [0, 1].map((i) => ({ id: String(firstId + i), timestamp: Date.parse('2026-01-01T00:00:00Z') + i, message: `tool=t${i} action=allow` })),
  };
}

describe.each(backendNames)('retention of shared metadata (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', AUDIT_RETENTION_DAYS: '30', RETENTION_INTERVAL_MS: '86400000', RETENTION_BATCH_ROWS: '3' }, {}, { inject: true });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  const streams = async () =>
    (await app.ctx.db.query<{ s: string; last_seq: string }>(`SELECT context -> 'cloudwatch' ->> 'logStream' AS s, last_seq FROM audit_contexts WHERE org_id = $1 ORDER BY 1`, [org.id])).rows;
  const expire = (upToSeq: number) =>
    app.ctx.db.query(`UPDATE audit_events SET received_at = now() - interval '40 days' WHERE org_id = $1 AND seq <= $2`, [org.id, upToSeq]);
  const lastSeq = async () => Number((await app.ctx.db.query<{ s: string }>('SELECT max(seq) AS s FROM audit_events WHERE org_id = $1', [org.id])).rows[0].s);

  it('removes contexts no kept event uses, keeps one reused by a kept event, and kept events still read whole', async () => {
    for (const [stream, id] of [['stream-a', 100], ['stream-b', 200]] as const) expect((await postJson(app.url, 'cloudwatch', org.key, batch(stream, id))).status).toBe(200);
    const expiredUpTo = await lastSeq();
    // stream-a again (its context is reused by later events), and stream-c.
    for (const [stream, id] of [['stream-a', 300], ['stream-c', 400]] as const) expect((await postJson(app.url, 'cloudwatch', org.key, batch(stream, id))).status).toBe(200);
    expect((await streams()).map((r) => r.s)).toEqual(['stream-a', 'stream-b', 'stream-c']);
    const before = (await storedEvents(app.url, org.key)).filter((e) => e.seq > expiredUpTo);

    await expire(expiredUpTo);
    const pass = await app.ctx.retention.runOnce();
    expect(pass!.orgs.find((o) => o.orgId === org.id)).toMatchObject({ removedEvents: 4, keptFromSeq: expiredUpTo + 1, removedContexts: 1 });
    expect((await streams()).map((r) => r.s)).toEqual(['stream-a', 'stream-c']);
    const after = await storedEvents(app.url, org.key);
    expect(after).toEqual(before);
    expect(after.map((e) => e.metadata.cloudwatch.logStream)).toEqual(['stream-a', 'stream-a', 'stream-c', 'stream-c']);

    // A write after the pass finds stream-c's context again; once everything expires, every context goes.
    expect((await postJson(app.url, 'cloudwatch', org.key, batch('stream-c', 500))).status).toBe(200);
    expect((await streams()).map((r) => r.s)).toEqual(['stream-a', 'stream-c']);
    const last = await lastSeq();
    expect(Number((await streams())[1].last_seq)).toBe(last);
    await expire(last);
    // Every event expired: all go, and every context with them.
    const second = await app.ctx.retention.runOnce();
    expect(second!.orgs.find((o) => o.orgId === org.id)).toMatchObject({ removedEvents: 6, removedContexts: 2 });
    expect(await streams()).toEqual([]);
  });
});
