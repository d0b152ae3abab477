// Two instances on one Postgres database: asked at the same moment, only one runs the retention pass (the lease row), and
// the pass removes every expired event once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realBackend, realBackendAvailable, type Backend } from '../helpers/backends.js';
import { createOrg, startApp, type RunningApp, type TestOrg } from '../helpers/app.js';

describe.runIf(realBackendAvailable)('retention on two instances', () => {
  let backend: Backend;
  let a: RunningApp;
  let b: RunningApp;
  let org: TestOrg;

  beforeAll(async () => {
    backend = await realBackend();
    const env = { ...backend.env, AUDIT_RETENTION_DAYS: '30', RETENTION_INTERVAL_MS: '86400000', RETENTION_BATCH_ROWS: '50' };
    a = await startApp(env);
    b = await startApp({ ...env, ...(await backend.sibling()) });
    org = await createOrg(a.url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await backend?.cleanup();
  });

  it('runs on one instance at a time, never both', async () => {
    for (let round = 1; round <= 3; round++) {
      // 5,000 expired events (100 batches: the pass outlasts the other instance's attempt) and 10 kept ones.
      const base = (round - 1) * 5_010;
      await a.ctx.db.query(
        `INSERT INTO audit_events (org_id, seq, occurred_at, received_at, source, type, dedupe_key)
         SELECT $1, $2 + g, now(), CASE WHEN g <= 5000 THEN now() - interval '40 days' ELSE now() END, 'raw', 'log', audit_dedupe_digest('k-' || ($2 + g))
         FROM generate_series(1, 5010) AS g`,
        [org.id, base],
      );
      await a.ctx.db.query('UPDATE organizations SET event_seq = $2 WHERE id = $1', [org.id, base + 5_010]);
      if (round > 1) {
        // The kept events of the previous round expire too, so this round removes a prefix again.
        await a.ctx.db.query(`UPDATE audit_events SET received_at = now() - interval '40 days' WHERE org_id = $1 AND seq <= $2`, [org.id, base]);
      }
      const [ra, rb] = await Promise.all([a.ctx.retention.runOnce(), b.ctx.retention.runOnce()]);
      const ran = [ra, rb].filter((r) => r !== null);
      expect({ round, ran: ran.length }).toEqual({ round, ran: 1 });
      const mine = ran[0]!.orgs.find((o) => o.orgId === org.id)!;
      expect(mine.removedEvents).toBe(round === 1 ? 5_000 : 5_010);
      expect(mine.keptFromSeq).toBe(base + 5_001);
      const left = await a.ctx.db.query<{ n: number; lo: number }>('SELECT count(*)::int AS n, min(seq) AS lo FROM audit_events WHERE org_id = $1', [org.id]);
      expect({ n: left.rows[0].n, lo: Number(left.rows[0].lo) }).toEqual({ n: 10, lo: base + 5_001 });
    }
  });
});
