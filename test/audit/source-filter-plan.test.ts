// The source filter of the listing (migration 010), both backends: a page of a rare source is read through the source
// index, newest first, oldest first and after a cursor, not by walking the organization's primary key.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { createOrg, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { listingPlan } from '../helpers/listing-plan.js';
import type { AuditEventFilter } from '../../src/audit/audit-repo.js';

const EVENTS = 20_000;

describe.each(backendNames)('source filter plan (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000' }, {}, { inject: true });
  let org: TestOrg;

  beforeAll(async () => {
    org = await createOrg(app.url);
    // An organization whose history is raw events, with one Datadog event in 400.
    await app.ctx.db.query(
      `INSERT INTO audit_events (org_id, seq, occurred_at, source, type, server_id, tool_name, action, metadata)
       SELECT $1, g, now(), CASE WHEN g % 400 = 0 THEN 'datadog' ELSE 'raw' END, 'tool_call', 'srv', 'tool', 'allow', '{}'::jsonb
       FROM generate_series(1, $2::int) AS g`,
      [org.id, EVENTS],
    );
    await app.ctx.db.query('UPDATE organizations SET event_seq = $2 WHERE id = $1', [org.id, EVENTS]);
    await app.ctx.db.query('ANALYZE audit_events');
  }, 120_000);

  /** The plan of the listing's query for `f`, after checking the page holds only that source. */
  async function planOf(f: Partial<AuditEventFilter>): Promise<string> {
    const { rows, plan } = await listingPlan(app.ctx.db, org.id, f);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.source === f.source)).toBe(true);
    return plan;
  }

  it('reads a rare source through audit_events_source_idx in both orders and after a cursor, without sorting', async () => {
    for (const f of [{ source: 'datadog' }, { source: 'datadog', order: 'asc' as const }, { source: 'datadog', beforeSeq: 10_000 }, { source: 'datadog', order: 'asc' as const, afterSeq: 10_000 }]) {
      const plan = await planOf(f);
      expect(plan, JSON.stringify(f)).toMatch(/Index Scan (Backward )?using audit_events_source_idx/);
      expect(plan, JSON.stringify(f)).not.toMatch(/Sort/);
    }
  });
});
