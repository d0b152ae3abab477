// The canonical record: the event exactly as the query API returns it, its RFC 8785 bytes recomputable by a reader
// from an export line, and what the stream sends derived from it (live and on replay alike). Both sinks and backends.
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { canonicalBytes, streamPayloadOf, type CanonicalRecord } from '../../src/audit/event-log/canonical-record.js';
import { anomalyEvent } from '../../src/anomaly/anomaly-events.js';
import { auditEventRowSchema } from '../../src/contract/api-rows.js';
import { cloudWatchSource } from '../../src/ingest/cloudwatch/cloudwatch-source.js';
import { backendSinks } from '../helpers/backends.js';
import { bearer, createOrg, http } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';
import { fixtureJson } from '../ingest/ingest-kit.js';

describe('canonical record', () => {
  it('has exactly the fields of a listed event, serialized per RFC 8785', () => {
    const record: CanonicalRecord = {
      seq: 7, type: 'tool_call', source: 'raw', occurredAt: '2026-01-02T03:04:05.678Z', receivedAt: '2026-01-02T03:04:06.000Z',
      serverId: 's', sessionId: null, toolName: 't\u2028"q"', action: 'allow', latencyMs: 3, metadata: { b: [1, 2.5, 1e21], a: { 'é': true, z: null } },
    };
    expect(Object.keys(record).sort()).toEqual(Object.keys(auditEventRowSchema.shape).sort());
    expect(canonicalBytes(record)).toBe(canonicalize(record));
    expect(canonicalBytes(record)).toBe(
      '{"action":"allow","latencyMs":3,"metadata":{"a":{"z":null,"é":true},"b":[1,2.5,1e+21]},"occurredAt":"2026-01-02T03:04:05.678Z","receivedAt":"2026-01-02T03:04:06.000Z","seq":7,"serverId":"s","sessionId":null,"source":"raw","toolName":"t\u2028\\"q\\"","type":"tool_call"}',
    );
    // A value JSON cannot carry is stored as JSON writes it (null), and the bytes say so too.
    expect(canonicalBytes({ ...record, metadata: { x: Number.NaN } })).toBe(canonicalBytes({ ...record, metadata: { x: null } }));
  });
});

describe.each(backendSinks)('canonical record, stored and read back (%s, %s sink)', (backendName, sink) => {
  const { app } = suiteApp(backendName, { EVENT_LOG_SINK: sink, ANOMALY_MIN_RATE: '1000000000' });

  it('is what a reader recomputes from each exported line, and the stream (live and replayed) sends what it derives', async () => {
    const org = await createOrg(app.url);
    const live = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const records = new Map<number, CanonicalRecord>();
    app.ctx.eventLog.onCommitted((orgId, _stored, _batch, rs) => {
      if (orgId === org.id) for (const r of rs) records.set(r.seq, r);
    });
    // A CloudWatch batch (shared metadata stored apart), raw calls (one creating a session, odd text, big numbers as
    // strings), an anomaly, then a suspension (session_update) through the API.
    const ctx = { idempotencyKey: null, receivedAt: new Date(), contentType: 'application/json', path: '', headers: {}, limits: { bodyBytes: 1e7, maxEntries: 1e4 } };
    const cw = (await cloudWatchSource().toEvents(fixtureJson('cloudwatch/subscription-data-message.json'), ctx)).events as NewAuditEvent[];
    await app.ctx.eventLog.append(org.id, cw);
    const raw: NewAuditEvent[] = [
      { type: 'tool_call', source: 'raw', occurredAt: new Date('2026-01-02T03:04:05.678Z'), serverId: 'srv', sessionId: 'sess-1', toolName: 'w \u2028 "q" \u{1F600}', action: 'deny', latencyMs: 0, metadata: { n: 123456789012345680000, s: '12345678901234567890123', nested: { k: [true, null, -0.5] } }, dedupeKey: 'raw:id:1' },
      { type: 'log', source: 'raw', occurredAt: new Date('2026-01-02T03:04:06Z'), metadata: {}, dedupeKey: 'once:raw:x' },
    ];
    await app.ctx.eventLog.append(org.id, raw);
    const evaluation = { windowCount: 500, baseline: 1.234, currentRate: 500, threshold: 300.555, verdict: true };
    const settings = { windowSeconds: 60, minRate: 100, multiplier: 3, cooldownSeconds: 300, suspendSessionsOnSpike: false };
    await app.ctx.eventLog.append(org.id, [anomalyEvent({ orgId: org.id, serverId: 'srv', toolName: 'w', at: new Date('2026-01-02T03:05:00Z'), evaluation, settings, sessions: ['sess-1'] } as never)], { internal: true });
    expect((await http(`${app.url}/api/v1/sessions/sess-1/suspend`, { method: 'POST', headers: bearer(org.key), json: { reason: 'test' } })).status).toBe(200);

    const res = await fetch(`${app.url}/api/v1/audit-events/export`, { headers: bearer(org.key) });
    const lines = (await res.text()).trim().split('\n');
    // Every record appended (the calls, the sessions' creations, the anomaly, the suspension) is one exported line.
    expect(lines.length).toBeGreaterThanOrEqual(cw.length + 5);
    expect([...records.keys()].sort((a, b) => a - b)).toEqual(lines.map((_, i) => i + 1));
    const streamed: unknown[] = [];
    for (const line of lines) {
      const read = JSON.parse(line) as CanonicalRecord;
      expect(canonicalBytes(read)).toBe(canonicalBytes(records.get(read.seq)!));
      const payload = streamPayloadOf(read);
      if (payload) streamed.push({ id: String(read.seq), event: payload.type, json: payload });
    }
    expect(streamed.map((s) => (s as { event: string }).event)).toEqual(expect.arrayContaining(['tool_call', 'session_update', 'anomaly']));
    await live.waitForCount(streamed.length);
    live.close();
    expect(live.events.map((e) => ({ id: e.id, event: e.event, json: e.json }))).toEqual(streamed);
    const replay = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': '0' });
    await replay.waitForCount(streamed.length);
    replay.close();
    expect(replay.events.map((e) => ({ id: e.id, event: e.event, json: e.json }))).toEqual(streamed);
    // Rows keep no copy of a tool call's stream payload (it follows from the columns); the others' is kept for reads.
    const kept = await app.ctx.db.query<{ type: string; n: number }>('SELECT type, count(payload)::int AS n FROM audit_events WHERE org_id = $1 GROUP BY type ORDER BY type', [org.id]);
    expect(kept.rows).toEqual([{ type: 'anomaly', n: 1 }, { type: 'log', n: 0 }, { type: 'session_update', n: expect.any(Number) }, { type: 'tool_call', n: 0 }]);
  });
});
