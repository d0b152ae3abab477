// The server, session and tool filters keep values apart though their indexes are keyed by a hash (migration 011),
// both backends: two values sharing a hash are never mixed, and a rare value's page is read through its index in both
// orders and after a cursor.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { createOrg, http, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { listingPlan } from '../helpers/listing-plan.js';
import type { AuditEventFilter } from '../../src/audit/audit-repo.js';

const EVENTS = 20_000;
/** Two server ids whose hashtext is the same (found by searching mcp-server-1 .. 300000). */
const TWINS = ['mcp-server-86594', 'mcp-server-184712'];

describe.each(backendNames)('filters keep values apart (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000' }, {}, { inject: true });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
    // Common values everywhere; one event in 400 has rare ones. The twins share a hash and alternate.
    await app.ctx.db.query(
      `INSERT INTO audit_events (org_id, seq, occurred_at, source, type, server_id, session_id, tool_name, action, metadata)
       SELECT $1, g, now(), 'raw', 'tool_call',
         CASE WHEN g % 400 = 0 THEN 'srv-rare' WHEN g % 7 = 0 THEN $3 WHEN g % 7 = 1 THEN $4 ELSE 'srv' END,
         CASE WHEN g % 400 = 0 THEN 'sess-rare' ELSE 'sess-' || (g % 50) END,
         CASE WHEN g % 400 = 0 THEN 'tool-rare' ELSE 'tool' END, 'allow', '{}'::jsonb
       FROM generate_series(1, $2::int) AS g`,
      [org.id, EVENTS, TWINS[0], TWINS[1]],
    );
    await app.ctx.db.query('UPDATE organizations SET event_seq = $2 WHERE id = $1', [org.id, EVENTS]);
    await app.ctx.db.query('ANALYZE audit_events');
  }, 120_000);

  it('reads a rare server, session or tool through its index in both orders and after a cursor, without sorting', async () => {
    const cases: [Partial<AuditEventFilter>, string][] = [
      [{ serverId: 'srv-rare' }, 'audit_events_server_idx'],
      [{ sessionId: 'sess-rare' }, 'audit_events_session_idx'],
      [{ toolName: 'tool-rare' }, 'audit_events_tool_idx'],
    ];
    for (const [filter, index] of cases) {
      for (const f of [filter, { ...filter, order: 'asc' as const }, { ...filter, beforeSeq: 10_000 }, { ...filter, order: 'asc' as const, afterSeq: 10_000 }]) {
        const { rows, plan } = await listingPlan(app.ctx.db, org.id, f);
        expect(rows.length, JSON.stringify(f)).toBeGreaterThan(0);
        expect(plan, JSON.stringify(f)).toMatch(new RegExp(`Index Scan (Backward )?using ${index}`));
        expect(plan, JSON.stringify(f)).not.toMatch(/Sort/);
      }
    }
  });

  it('keeps apart two servers whose keys share a hash, over HTTP, in both orders', async () => {
    const [{ a, b }] = (await app.ctx.db.query<{ a: number; b: number }>('SELECT audit_key_hash($1) AS a, audit_key_hash($2) AS b', TWINS)).rows;
    expect(a).toBe(b);
    for (const [i, twin] of TWINS.entries()) {
      for (const order of ['desc', 'asc']) {
        const res = await http(`${app.url}/api/v1/audit-events?serverId=${twin}&order=${order}&limit=200`, { headers: { authorization: `Bearer ${org.key}` } });
        expect(res.status).toBe(200);
        const seqs: number[] = res.body.items.map((e: { seq: number }) => e.seq);
        expect(seqs).toHaveLength(200);
        expect(res.body.items.every((e: { serverId: string }) => e.serverId === twin)).toBe(true);
        expect(seqs.every((s) => s % 7 === i && s % 400 !== 0)).toBe(true);
      }
    }
  });
});
