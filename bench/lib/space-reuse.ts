// Whether space freed by removing events is used again (removal is by DELETE, not partition drops): sizes after a
// retention pass, after appending as many events again, and over steady cycles of removing the oldest and appending.
import { nowMs } from './clock.js';
import type { RunContext } from './context.js';
import type { BenchDatabase } from './provision.js';

/** Events appended per transaction (what ingest commits at a time, roughly), and removed per DELETE (as retention). */
const APPEND_BATCH = 20_000;
const DELETE_BATCH = 10_000;

export interface SpaceCycle {
  removed: number;
  appended: number;
  /** audit_events with its indexes and TOAST after the cycle's last VACUUM. */
  bytes: number;
  heapBytes: number;
  seconds: number;
}

export interface SpaceReuse {
  bytesBeforePass: number;
  /** After the pass and one VACUUM (what autovacuum does after that many dead rows). */
  bytesAfterVacuum: number;
  /** After as many events as the pass removed were appended again (in transactions of APPEND_BATCH) and a VACUUM. */
  bytesAfterRefill: number;
  refilledEvents: number;
  vacuumSeconds: number;
  refillSeconds: number;
  /** Then each cycle: the oldest events removed, VACUUM, as many appended, VACUUM: the size a steady retention keeps. */
  cycles: SpaceCycle[];
}

async function sizes(db: BenchDatabase): Promise<{ bytes: number; heapBytes: number }> {
  const [r] = await db.query<{ total: string; heap: string }>(`SELECT pg_total_relation_size('audit_events') AS total, pg_relation_size('audit_events') AS heap`);
  return { bytes: Number(r.total), heapBytes: Number(r.heap) };
}

/**
 * Appends `n` copies of the org's oldest kept events (new seqs, received now, fresh dedupe digests), one transaction per
 * batch; seqs are gapless, so each batch copies from the smallest seq plus what was appended so far.
 */
async function appendCopies(db: BenchDatabase, orgId: string, n: number): Promise<number> {
  const [{ lo }] = await db.query<{ lo: string | null }>('SELECT min(seq) AS lo FROM audit_events WHERE org_id = $1', [orgId]);
  if (lo === null) return 0;
  let appended = 0;
  while (appended < n) {
    const [{ c }] = await db.query<{ c: string }>(
      `WITH last AS (SELECT event_seq FROM organizations WHERE id = $1 FOR UPDATE),
       ins AS (
         INSERT INTO audit_events (org_id, seq, occurred_at, received_at, source, type, server_id, session_id, tool_name, action, latency_ms, payload, metadata, dedupe_key, context_id)
         SELECT org_id, (SELECT event_seq FROM last) + row_number() OVER (ORDER BY seq), now(), now(), source, type, server_id, session_id, tool_name,
                action, latency_ms, payload, metadata, CASE WHEN dedupe_key IS NOT NULL THEN audit_dedupe_digest(gen_random_uuid()::text) END, context_id
         FROM (SELECT * FROM audit_events WHERE org_id = $1 AND seq >= $3 ORDER BY seq LIMIT $2) AS kept
         RETURNING seq, context_id
       ), ctx AS (
         -- the copies use their originals' shared metadata (migration 010): its last use moves up, as a write would move it
         UPDATE audit_contexts c SET last_seq = greatest(c.last_seq, m.s)
         FROM (SELECT context_id, max(seq) AS s FROM ins WHERE context_id IS NOT NULL GROUP BY 1) AS m WHERE c.org_id = $1 AND c.id = m.context_id
       )
       UPDATE organizations SET event_seq = (SELECT max(seq) FROM ins) WHERE id = $1 RETURNING (SELECT count(*) FROM ins) AS c`,
      [orgId, Math.min(APPEND_BATCH, n - appended), Number(lo) + appended],
    );
    if (Number(c) === 0) break;
    appended += Number(c);
  }
  return appended;
}

/** Removes the org's `n` oldest events by seq prefix, DELETE_BATCH per statement, as the retention pass does. */
async function removeOldest(db: BenchDatabase, orgId: string, n: number): Promise<number> {
  const [{ lo }] = await db.query<{ lo: string | null }>('SELECT min(seq) AS lo FROM audit_events WHERE org_id = $1', [orgId]);
  if (lo === null) return 0;
  let removed = 0;
  for (let upTo = Number(lo) - 1; removed < n; ) {
    upTo += Math.min(DELETE_BATCH, n - removed);
    const r = await db.query<{ c: string }>('WITH d AS (DELETE FROM audit_events WHERE org_id = $1 AND seq <= $2 RETURNING 1) SELECT count(*) AS c FROM d', [orgId, upTo]);
    removed += Number(r[0].c);
  }
  return removed;
}

/**
 * After a retention pass that removed `removed` events: VACUUM, append as many, VACUUM; then `cycles` cycles each removing
 * `cycleFraction` of the org's events and appending as many. Btree pages emptied by one VACUUM are reusable only from a
 * later VACUUM that runs after newer transactions (Postgres's page-recycling rule), so the first cycle's figure is the
 * one-off and the later cycles show the size steady retention keeps.
 */
export async function measureSpaceReuse(ctx: RunContext, db: BenchDatabase, orgId: string, removed: number, bytesBeforePass: number, cycles: number, cycleFraction: number): Promise<SpaceReuse> {
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  const v0 = nowMs();
  await db.query('VACUUM audit_events');
  const vacuumSeconds = (nowMs() - v0) / 1000;
  const bytesAfterVacuum = (await sizes(db)).bytes;
  const r0 = nowMs();
  const refilledEvents = await appendCopies(db, orgId, removed);
  await db.query('VACUUM audit_events');
  const refillSeconds = (nowMs() - r0) / 1000;
  const bytesAfterRefill = (await sizes(db)).bytes;
  ctx.log(
    `    space: ${mib(bytesBeforePass)} before the pass, ${mib(bytesAfterVacuum)} after it and VACUUM, ` +
      `${mib(bytesAfterRefill)} after ${refilledEvents.toLocaleString('en-US')} events appended again and VACUUM (${refillSeconds.toFixed(0)} s)`,
  );
  const out: SpaceCycle[] = [];
  for (let i = 0; i < cycles; i++) {
    const c0 = nowMs();
    const [{ n }] = await db.query<{ n: string }>('SELECT count(*) AS n FROM audit_events WHERE org_id = $1', [orgId]);
    const target = Math.round(Number(n) * cycleFraction);
    const gone = await removeOldest(db, orgId, target);
    await db.query('VACUUM audit_events');
    const appended = await appendCopies(db, orgId, gone);
    await db.query('VACUUM audit_events');
    const s = await sizes(db);
    out.push({ removed: gone, appended, ...s, seconds: (nowMs() - c0) / 1000 });
    ctx.log(`    cycle ${i + 1}: ${gone.toLocaleString('en-US')} oldest removed, as many appended: ${mib(s.bytes)} (heap ${mib(s.heapBytes)}) in ${((nowMs() - c0) / 1000).toFixed(0)} s`);
  }
  return { bytesBeforePass, bytesAfterVacuum, bytesAfterRefill, refilledEvents, vacuumSeconds, refillSeconds, cycles: out };
}
