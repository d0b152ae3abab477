// GET /api/v1/audit-events/stats: counts by action and bucket, session counters and anomalies of a fixed window, from SQL.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames, realBackendAvailable } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';
import { burst, FAST, putSettings } from '../anomaly/anomaly-helpers.js';

const MIN = 60_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe.each(backendNames)('audit event stats (%s)', (name) => {
  const { app } = suiteApp(name);
  let org: TestOrg;
  const stats = (window?: string, key = org.key) => http(`${app.url}/api/v1/audit-events/stats${window ? `?window=${window}` : ''}`, { headers: bearer(key) });

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  it('counts tool calls of the window by action and by bucket, by their own timestamps', async () => {
    const calls = [
      ...['allow', 'allow', 'deny', 'redact', 'flag', 'escalate'].map((action, i) => toolCall(i, { action, sessionId: `now-${i % 2}`, timestamp: ago(1000) })),
      toolCall(10, { action: 'deny', sessionId: 'half-hour', timestamp: ago(30 * MIN) }),
      toolCall(11, { action: null, sessionId: 'three-hours', timestamp: ago(180 * MIN) }),
      toolCall(12, { action: 'allow', sessionId: 'two-days', timestamp: ago(48 * 60 * MIN) }),
      toolCall(13, { action: 'allow', sessionId: 'future', timestamp: new Date(Date.now() + 120 * MIN).toISOString() }),
    ];
    expect((await postEvents(app.url, org.key, calls)).status).toBe(200);
    const seq = (await http(`${app.url}/api/v1/audit-events?limit=1`, { headers: bearer(org.key) })).body.items[0].seq;

    const hour = await stats('1h');
    expect(hour.status).toBe(200);
    expect(hour.body).toMatchObject({ window: '1h', bucketSeconds: 60, asOfSeq: seq, total: 7 });
    expect(hour.body.actions).toEqual({ allow: 2, deny: 2, redact: 1, flag: 1, unknown: 1 });
    expect(hour.body.buckets).toHaveLength(60);
    expect(Date.parse(hour.body.to) - Date.parse(hour.body.from)).toBe(3600_000);
    const nowBucket = hour.body.buckets[59];
    expect(nowBucket.total + hour.body.buckets[58].total).toBe(6); // the calls of a second ago (the minute may just have turned)
    const half = hour.body.buckets.find((b: { start: string; counts: Record<string, number> }) => Math.abs(Date.parse(b.start) - (Date.now() - 30 * MIN)) < 2 * MIN && b.counts.deny === 1);
    expect(half).toBeDefined();
    expect(hour.body.buckets.reduce((n: number, b: { total: number }) => n + b.total, 0)).toBe(7);
    // Sessions whose latest call is in the window, by status now.
    expect(hour.body.sessions).toEqual({ seen: 3, active: 3, suspended: 0 });

    const day = await stats('24h');
    expect(day.body).toMatchObject({ window: '24h', bucketSeconds: 900, total: 8, sessions: { seen: 4, active: 4, suspended: 0 } });
    expect(day.body.buckets).toHaveLength(96);
    expect(day.body.actions.unknown).toBe(2);

    // The default window is the last hour; a suspension moves a session from active to suspended.
    expect((await http(`${app.url}/api/v1/sessions/half-hour/suspend`, { method: 'POST', headers: bearer(org.key), json: {} })).status).toBe(200);
    const after = await stats();
    expect(after.body).toMatchObject({ window: '1h', total: 7, sessions: { seen: 3, active: 2, suspended: 1 } });
    expect(after.body.asOfSeq).toBe(seq + 1);
  });

  it('counts from per-minute totals that removals (retention, any DELETE) take away, leaving no empty minutes', async () => {
    const other = await createOrg(app.url);
    const calls = ['allow', 'deny', 'deny', 'escalate'].map((action, i) => toolCall(i, { action, timestamp: ago(5 * MIN) }));
    expect((await postEvents(app.url, other.key, calls)).status).toBe(200);
    const totals = async () => {
      const r = await stats('1h', other.key);
      return { total: r.body.total, actions: r.body.actions };
    };
    expect(await totals()).toEqual({ total: 4, actions: { allow: 1, deny: 2, redact: 0, flag: 0, unknown: 1 } });
    // 'escalate' is outside the action vocabulary: stored as a null action (metadata.rawAction), counted as unknown.
    await app.ctx.db.query(`DELETE FROM audit_events WHERE org_id = $1 AND (action = 'deny' OR action IS NULL)`, [other.id]);
    expect(await totals()).toEqual({ total: 1, actions: { allow: 1, deny: 0, redact: 0, flag: 0, unknown: 0 } });
    const rows = await app.ctx.db.query<{ action: string; calls: number }>('SELECT action, calls::int AS calls FROM audit_call_minutes WHERE org_id = $1', [other.id]);
    expect(rows.rows).toEqual([{ action: 'allow', calls: 1 }]);
    // The latest time a sender may give has its minute too.
    const edges = [toolCall(20, { timestamp: '9999-12-31T23:59:59.999Z' })];
    expect((await postEvents(app.url, other.key, edges)).body).toEqual({ accepted: 1, duplicates: 0 });
  });

  it('lists the anomalies of the window, newest first, with the streamed fields', async () => {
    await putSettings(app.url, org.key, FAST);
    const client = await openSse(`${app.url}/api/v1/events?types=anomaly`, bearer(org.key));
    await burst(app.url, org.key, 20, { serverId: 'spiky', toolName: 'bulk_export' });
    await client.waitForCount(1);
    client.close();
    const s = await stats('1h');
    expect(s.body.anomalies).toHaveLength(1);
    const { seq, ...fields } = s.body.anomalies[0];
    expect(seq).toBe(Number(client.events[0].id));
    expect(fields).toEqual(client.events[0].json);
    expect(s.body.total).toBe(27);
  });

  it('refuses other windows and other credentials, and shows another organization nothing', async () => {
    const bad = await stats('7d');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(bad.body.issues[0].path).toBe('window');
    expect((await http(`${app.url}/api/v1/audit-events/stats`)).status).toBe(401);
    const ingestOnly = await createOrg(app.url, { scopes: ['ingest:write'] });
    expect((await stats('1h', ingestOnly.key)).status).toBe(403);
    const other = await stats('24h', ingestOnly.key.replace(/.$/, (c) => (c === 'a' ? 'b' : 'a')));
    expect(other.status).toBe(401);
    const reader = await createOrg(app.url);
    const empty = await stats('24h', reader.key);
    expect(empty.body).toMatchObject({ total: 0, asOfSeq: 0, anomalies: [], sessions: { seen: 0, active: 0, suspended: 0 } });
  });
});

describe.runIf(realBackendAvailable)('audit event stats: the time bound', () => {
  const { app } = suiteApp('real', { STATS_QUERY_TIMEOUT_MS: '1' });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
  });

  it('answers 503 with Retry-After when the figures take longer than STATS_QUERY_TIMEOUT_MS, and stays ready', async () => {
    // 200,000 sessions seen in the last hour, written straight into the table: far more than 1 ms to count. (Tool calls
    // are counted from per-minute totals, which stay small however many calls there are.)
    await app.ctx.db.query(
      `INSERT INTO agent_sessions (org_id, session_id, last_seen_at)
       SELECT $1, 'bulk-' || g, now() - (g % 3600) * interval '1 second' FROM generate_series(1, 200000) AS g`,
      [org.id],
    );
    const r = await http(`${app.url}/api/v1/audit-events/stats?window=24h`, { headers: bearer(org.key) });
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ statusCode: 503, code: 'stats_timeout' });
    expect(r.headers.get('retry-after')).toBe('5');
    expect((await http(`${app.url}/readyz`)).status).toBe(200);
  });
});
