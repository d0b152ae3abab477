// An append stores its whole request or nothing: a row Postgres refuses in the middle of it (after others were written
// by the sink) leaves no row, no seq, no session, server, context or Idempotency-Key record. Both sinks, both backends.
import { describe, expect, it } from 'vitest';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { backendSinks } from '../helpers/backends.js';
import { createOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

const shared = { source_detail: 'g', payloadFormat: 'subscription', cloudwatch: { logGroup: 'g', logStream: 's' } };
const event = (i: number, extra: Partial<NewAuditEvent> = {}): NewAuditEvent => ({
  type: 'tool_call', source: 'cloudwatch', occurredAt: new Date(1714558800000 + i), serverId: `srv-${i}`, sessionId: `sess-${i}`, toolName: 't', action: 'allow', latencyMs: 1,
  metadata: { ...shared, n: i }, sharedMetadata: shared, dedupeKey: `cw:${i}`, ...extra,
});

describe.each(backendSinks)('whole or nothing (%s, %s sink)', (backendName, sink) => {
  const { app } = suiteApp(backendName, { EVENT_LOG_SINK: sink, ANOMALY_MIN_RATE: '1000000000' }, {}, { inject: true });

  const count = async (table: string, orgId: string) => (await app.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE org_id = $1`, [orgId])).rows[0].n;

  it('stores nothing of a request whose last row Postgres refuses, and the next append starts at the same seq', async () => {
    const org = await createOrg(app.url);
    // A row trigger of this test's database refuses one row (as a constraint or a full disk would), after the sink has
    // sent every row before it.
    await app.ctx.db.query(`CREATE OR REPLACE FUNCTION refuse_marked() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.metadata ? 'refuse' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$`);
    await app.ctx.db.query('CREATE TRIGGER refuse_marked BEFORE INSERT ON audit_events FOR EACH ROW EXECUTE FUNCTION refuse_marked()');
    try {
      const events = [...Array.from({ length: 1_500 }, (_, i) => event(i)), event(1_500, { metadata: { ...shared, refuse: true } })];
      await expect(app.ctx.eventLog.append(org.id, events, { idempotency: { key: 'k-1', fingerprint: 'f' } })).rejects.toThrow(/refused by the test/);
    } finally {
      await app.ctx.db.query('DROP TRIGGER refuse_marked ON audit_events');
    }
    for (const table of ['audit_events', 'agent_sessions', 'servers', 'audit_contexts', 'ingest_requests']) expect([table, await count(table, org.id)]).toEqual([table, 0]);
    const counter = await app.ctx.db.query<{ event_seq: number }>('SELECT event_seq FROM organizations WHERE id = $1', [org.id]);
    expect(Number(counter.rows[0].event_seq)).toBe(0);

    // The same request again (a retry) is stored whole, from seq 1, its Idempotency-Key recorded once.
    const retry = await app.ctx.eventLog.append(org.id, [event(0), event(1)], { idempotency: { key: 'k-1', fingerprint: 'f' } });
    expect(retry.accepted).toBe(2);
    expect(retry.records.map((r) => r.seq)).toEqual([1, 2, 3, 4]); // a session_update before each call
    expect(await count('ingest_requests', org.id)).toBe(1);
  });
});
