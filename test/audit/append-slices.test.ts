// The append serializes rows in bounded slices: a batch too large for one statement is several in one transaction, gapless.
import { describe, expect, it } from 'vitest';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { eventRow, MAX_SLICE_CHARS, rowJson, rowSlices } from '../../src/audit/append-rows.js';
import { listAuditEvents } from '../../src/audit/audit-repo.js';
import { backendNames } from '../helpers/backends.js';
import { createOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

describe('rowSlices', () => {
  const texts = (rows: unknown[]) => rows.map((r) => JSON.stringify(r));

  it('keeps an ordinary batch in one slice, identical to JSON.stringify of all rows', () => {
    const rows = Array.from({ length: 500 }, (_, i) => ({ seq: i, metadata: { m: 'x'.repeat(100) } }));
    expect([...rowSlices(texts(rows))]).toEqual([JSON.stringify(rows)]);
  });

  it('splits by size and by count, in order, each slice within the bound unless it is a single row', () => {
    const rows = Array.from({ length: 9 }, (_, i) => ({ seq: i, pad: 'y'.repeat(i === 4 ? 500 : 40) }));
    const slices = [...rowSlices(texts(rows), 200, 4)];
    expect(slices.flatMap((s) => JSON.parse(s) as unknown[])).toEqual(rows);
    for (const s of slices) {
      const n = (JSON.parse(s) as unknown[]).length;
      expect(s.length <= 200 || n === 1).toBe(true);
      expect(n).toBeLessThanOrEqual(4);
    }
    expect(slices.some((s) => s.length > 200)).toBe(true);
  });
});

describe('eventRow', () => {
  const cloudwatch = { logGroup: '/aws/lambda/x', logStream: 's' };
  const event: NewAuditEvent = {
    type: 'tool_call',
    source: 'cloudwatch',
    occurredAt: new Date('2026-11-23T10:00:00.000Z'),
    serverId: 'srv',
    sessionId: 'sess',
    toolName: 'query',
    action: 'allow',
    latencyMs: 12,
    metadata: { source_detail: '/aws/lambda/x', payloadFormat: 'spec', cloudwatch: { ...cloudwatch, eventId: 'e1' }, message: 'm "quoted"' },
    sharedMetadata: { source_detail: '/aws/lambda/x', payloadFormat: 'spec', cloudwatch },
    dedupeKey: 'cw:e1',
  };

  it('serializes everything but the seq and the context, which rowJson adds', () => {
    const row = eventRow(event);
    expect(row.shared).toBe(event.sharedMetadata);
    expect(row.payload).toEqual({ type: 'tool_call', serverId: 'srv', sessionId: 'sess', toolName: 'query', action: 'allow', latencyMs: 12, timestamp: '2026-11-23T10:00:00.000Z' });
    expect(JSON.parse(rowJson(row, 41, 3))).toEqual({
      seq: 41,
      ctx: 3,
      occurred_at: '2026-11-23T10:00:00.000Z',
      source: 'cloudwatch',
      type: 'tool_call',
      server_id: 'srv',
      session_id: 'sess',
      tool_name: 'query',
      action: 'allow',
      latency_ms: 12,
      payload: null,
      metadata: { cloudwatch: { eventId: 'e1' }, message: 'm "quoted"' },
      dedupe_key: 'cw:e1',
    });
    expect(JSON.parse(rowJson(eventRow({ ...event, sharedMetadata: undefined }), 7, null))).toMatchObject({ seq: 7, metadata: event.metadata });
    expect(JSON.parse(rowJson(eventRow({ ...event, sharedMetadata: undefined }), 7, null))).not.toHaveProperty('ctx');
  });
});

describe.each(backendNames)('append of a batch larger than one statement (%s)', (backendName) => {
  const { app } = suiteApp(backendName);

  it('stores every row with consecutive seqs and publishes them as one batch', async () => {
    const org = await createOrg(app.url);
    const n = 2_600;
    const events: NewAuditEvent[] = Array.from({ length: n }, (_, i) => ({
      type: 'tool_call',
      source: 'raw',
      occurredAt: new Date(1714558800000 + i),
      serverId: 'srv-big',
      toolName: 'bulk',
      metadata: { pad: `${i}`.padEnd(4_000, '.') },
      dedupeKey: `raw:id:big-${i}`,
    }));
    expect(JSON.stringify(events).length).toBeGreaterThan(MAX_SLICE_CHARS);
    const r = await app.ctx.recorder.recordEvents(org.id, events);
    expect(r.accepted).toBe(n);
    expect(r.batch).toMatchObject({ firstSeq: 1, lastSeq: n });
    expect(r.batch!.events.map((e) => e.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    const rows = await app.ctx.db.query<{ seq: string; pad: string }>(`SELECT seq, metadata->>'pad' AS pad FROM audit_events WHERE org_id = $1 ORDER BY seq`, [org.id]);
    expect(rows.rows.map((x) => Number(x.seq))).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(rows.rows.every((x, i) => x.pad.startsWith(`${i}.`))).toBe(true);
    const counter = await app.ctx.db.query<{ event_seq: string }>('SELECT event_seq FROM organizations WHERE id = $1', [org.id]);
    expect(Number(counter.rows[0].event_seq)).toBe(n);
  });

  it('stores the shared metadata of a batch in several statements once, each row naming it, and reads every row whole', async () => {
    const org = await createOrg(app.url);
    const n = 2_600;
    // Two log streams' contexts, alternating, as a group of two requests would hold them.
    const shared = [0, 1].map((k) => ({ source_detail: 'g', payloadFormat: 'subscription', cloudwatch: { logGroup: 'g', logStream: `s-${k}` } }));
    const events: NewAuditEvent[] = Array.from({ length: n }, (_, i) => {
      const s = shared[i % 2];
      return {
        type: 'log',
        source: 'cloudwatch',
        occurredAt: new Date(1714558800000 + i),
        metadata: { ...s, cloudwatch: { ...s.cloudwatch, eventId: String(i) }, message: `${i}`.padEnd(4_000, '.') },
        sharedMetadata: s,
        dedupeKey: `cw:${i}`,
      };
    });
    expect(JSON.stringify(events).length).toBeGreaterThan(MAX_SLICE_CHARS);
    expect((await app.ctx.recorder.recordEvents(org.id, events)).accepted).toBe(n);
    const contexts = await app.ctx.db.query<{ stream: string; last_seq: string }>(
      `SELECT context -> 'cloudwatch' ->> 'logStream' AS stream, last_seq FROM audit_contexts WHERE org_id = $1 ORDER BY 1`,
      [org.id],
    );
    expect(contexts.rows.map((r) => [r.stream, Number(r.last_seq)])).toEqual([['s-0', n - 1], ['s-1', n]]);
    const listed = (await listAuditEvents(app.ctx.db, org.id, { order: 'asc', limit: n, maxBytes: 64 * 1024 * 1024 })).rows;
    expect(listed.map((e) => e.metadata)).toEqual(events.map((e) => e.metadata));
    const named = await app.ctx.db.query<{ n: number }>('SELECT count(context_id)::int AS n FROM audit_events WHERE org_id = $1', [org.id]);
    expect(named.rows[0].n).toBe(n);
  });
});
