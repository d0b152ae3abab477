// Seqs per organization are gapless and in commit order, whoever appends (one request, many at once, two instances),
// however large the append (several statements or COPY chunks), with both row sinks on both backends.
import { describe, expect, it } from 'vitest';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { MAX_STATEMENT_CHARS } from '../../src/audit/event-log/insert-sink.js';
import { backendSinks } from '../helpers/backends.js';
import { createOrg, startApp } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

const event = (key: string, extra: Partial<NewAuditEvent> = {}): NewAuditEvent => ({
  type: 'tool_call', source: 'raw', occurredAt: new Date(1714558800000), serverId: 'srv', toolName: 't', action: 'allow', latencyMs: 1, metadata: {}, dedupeKey: key, ...extra,
});
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe.each(backendSinks)('gapless seqs (%s, %s sink)', (backendName, sink) => {
  const { app, backend } = suiteApp(backendName, { EVENT_LOG_SINK: sink, ANOMALY_MIN_RATE: '1000000000' });

  const storedSeqs = async (orgId: string) =>
    (await app.ctx.db.query<{ seq: number }>('SELECT seq FROM audit_events WHERE org_id = $1 ORDER BY seq', [orgId])).rows.map((r) => Number(r.seq));
  const counter = async (orgId: string) => Number((await app.ctx.db.query<{ event_seq: number }>('SELECT event_seq FROM organizations WHERE id = $1', [orgId])).rows[0].event_seq);

  it('gives an append larger than one statement or COPY chunk consecutive seqs, answered in its order, with one published batch', async () => {
    expect(app.ctx.eventLog.sink).toBe(sink);
    const org = await createOrg(app.url);
    const n = 2_600;
    const events = upTo(n).map((i) => event(`raw:id:big-${i}`, { metadata: { pad: `${i}`.padEnd(4_000, '.') } }));
    expect(JSON.stringify(events).length).toBeGreaterThan(MAX_STATEMENT_CHARS);
    const r = await app.ctx.eventLog.append(org.id, events);
    expect(r.seqs).toEqual(upTo(n));
    expect(r.records.map((x) => x.seq)).toEqual(upTo(n));
    expect(r.batch).toMatchObject({ firstSeq: 1, lastSeq: n });
    expect(r.batch!.events.map((e) => e.seq)).toEqual(upTo(n));
    expect(await storedSeqs(org.id)).toEqual(upTo(n));
    const pads = await app.ctx.db.query<{ pad: string }>(`SELECT metadata->>'pad' AS pad FROM audit_events WHERE org_id = $1 ORDER BY seq`, [org.id]);
    expect(pads.rows.every((x, i) => x.pad.startsWith(`${i + 1}.`))).toBe(true);
    expect(await counter(org.id)).toBe(n);
  });

  it('keeps seqs gapless across concurrent appends and state changes of one organization, each append a consecutive run', async () => {
    const org = await createOrg(app.url);
    const appends = upTo(20).map((r) => app.ctx.eventLog.append(org.id, upTo(25).map((i) => event(`raw:id:c-${r}-${i}`, { sessionId: `s-${r % 3}` }))));
    const checked = app.ctx.eventLog.appendChecked(org.id, async () => ({ events: [event('raw:id:checked', { type: 'log', toolName: null })], result: 'checked' }));
    const results = await Promise.all(appends);
    expect((await checked).result).toBe('checked');
    for (const r of results) {
      const own = r.records.map((x) => x.seq);
      expect(own).toEqual(upTo(own.length).map((i) => own[0] + i - 1));
    }
    // 500 calls, the checked event, and a session_update for each of the three sessions created.
    expect(await storedSeqs(org.id)).toEqual(upTo(504));
    expect(await counter(org.id)).toBe(504);
  });

  it.runIf(backendName === 'real')('keeps seqs gapless when two instances append for one organization at once', async () => {
    const other = await startApp({ ...(await backend.sibling()), EVENT_LOG_SINK: sink, ANOMALY_MIN_RATE: '1000000000' });
    try {
      const org = await createOrg(app.url);
      const writes = upTo(10).flatMap((r) => [app, other].map((a, k) => a.ctx.eventLog.append(org.id, upTo(30).map((i) => event(`raw:id:two-${k}-${r}-${i}`)))));
      await Promise.all(writes);
      expect(await storedSeqs(org.id)).toEqual(upTo(600));
      // Commit order is seq order: each instance's appends got increasing runs.
      const runs = (await Promise.all(writes)).map((r) => r.seqs[0]!);
      expect(new Set(runs).size).toBe(20);
    } finally {
      await other.close();
    }
  });
});
