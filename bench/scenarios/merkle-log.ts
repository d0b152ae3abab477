// The verifiable log's cost, in one process on Postgres: the same CloudWatch batches appended by the event log with the
// Merkle step and without it (interleaved rounds, separate organizations), the bytes per event the log adds (as
// appended, after VACUUM, after VACUUM FULL; by relation), and the latency of inclusion and consistency proofs in a log
// of 5,000,000 events (its tiles written directly).
import { appendLocked, prepareRequest } from '../../src/audit/event-log/append.js';
import { ROW_SINKS } from '../../src/audit/event-log/event-log.js';
import { lockOrgSeq } from '../../src/audit/event-log/log-sql.js';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDb } from '../../src/db/pg-db.js';
import { proveConsistency, proveInclusion } from '../../src/verify/log-proofs.js';
import { checkpointText, originOf } from '../../src/verify/checkpoint.js';
import { createMerkleStep } from '../../src/verify/merkle-append.js';
import { FULL_TILE_HEAD } from '../../src/verify/merkle-sql.js';
import { signerOf, signNote } from '../../src/verify/signed-note.js';
import { perfectRoot } from '../../src/verify/tiles.js';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { nowMs } from '../lib/clock.js';
import type { RunContext } from '../lib/context.js';
import { createDatabase } from '../lib/provision.js';
import { batches } from './sinks.js';

/** Appends of 2 batches of 500 (1,000 events, a group commit of two requests) per side per round. */
const APPENDS = Number(process.env.BENCH_MERKLE_APPENDS ?? 40);
const ROUNDS = 3;
const BIG = 5_000_000;
const PROOFS = 200;
/** CHECKPOINT_EVERY_EVENTS's default: an organization appending steadily gets a checkpoint per this many events. */
const CHECKPOINT_EVERY = 1000;
/** Small appends (one request of this many events each), for the steady growth with partial tiles rewritten often. */
const SMALL_APPEND = 10;
const SMALL_APPENDS = Number(process.env.BENCH_MERKLE_SMALL_APPENDS ?? 2000);

/** Bytes per event of each relation the log writes, and their sum (the goal's measure: tiles and log rows). */
export interface LogBytes {
  total: number;
  byRelation: Record<string, number>;
}

export interface MerkleLogResult {
  events: number;
  rounds: { offUsPerEvent: number; onUsPerEvent: number }[];
  /** Median over rounds of on / off wall time per event. */
  slowdown: number;
  /**
   * onDisk: tiles and log rows with their indexes and TOAST after VACUUM FULL, over the leaves appended; asAppended and
   * afterVacuum: the same before it (partial tiles rewritten as they grow leave dead versions until vacuum);
   * checkpoints: signed checkpoints at CHECKPOINT_EVERY_EVENTS's default, not in onDisk.
   */
  bytesPerEvent: { hashes: number; onDisk: number; asAppended: number; afterVacuum: number; checkpoints: number; byRelation: Record<string, number> };
  /**
   * Bytes the log tables grow per leaf appended with a plain VACUUM between (its dead versions reused, never VACUUM
   * FULL): over rounds 2 and 3 (VACUUM after each round), and for appends of SMALL_APPEND events (VACUUM every 500).
   */
  steadyBytesPerEvent: { rounds: number; smallAppends: number };
  proofsAt5M: { inclusionMs: { p50: number; p99: number }; consistencyMs: { p50: number; p99: number } };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function appendAll(db: Db, orgId: string, work: ReturnType<typeof batches>, merkle: ReturnType<typeof createMerkleStep> | null): Promise<number> {
  const t0 = nowMs();
  let events = 0;
  for (let i = 0; i < work.length; i += 2) {
    const requests = [prepareRequest({ events: work[i] }), prepareRequest({ events: work[i + 1] })];
    // As the event log does: the part of each leaf hash that needs no seq, before the lock.
    for (const r of requests) merkle?.prepare(r.fresh.map((p) => p.event));
    await db.transaction(async (tx) => {
      const lastSeq = await lockOrgSeq(tx, orgId);
      const out = await appendLocked(tx, orgId, lastSeq, requests, ROW_SINKS.copy, new Date());
      const done = out.outcomes.flatMap((o) => (o.ok ? [o.value] : []));
      if (merkle) await merkle.appended(tx, orgId, lastSeq, done.flatMap((a) => a.records), done.flatMap((a) => a.stored));
    });
    events += work[i].length + work[i + 1].length;
  }
  return ((nowMs() - t0) * 1000) / events;
}

/**
 * A log of `size` leaves written as tiles directly: every full leaf tile holds the same 256 random hashes, so every
 * entry of level L is the root of a level L - 1 tile and the tree is consistent (latency depends on reads, not values).
 */
async function bigLog(db: Db, orgId: string, size: number): Promise<void> {
  const leaves = Array.from({ length: 256 }, () => randomBytes(32));
  let entry: Buffer | null = null;
  for (let level = 0, n = size; n > 0; level++, n = Math.floor(n / 256)) {
    const full = entry === null ? Buffer.concat(leaves) : Buffer.concat(Array(256).fill(entry));
    await db.query(
      `INSERT INTO merkle_tiles (org_id, level, idx, head, tail)
       SELECT $1, $2::int, t, substring(decode($4, 'hex') FROM 1 FOR ${FULL_TILE_HEAD}), substring(decode($4, 'hex') FROM ${FULL_TILE_HEAD + 1})
       FROM generate_series(0, $3::bigint / 256 - 1) AS t`,
      [orgId, level, n, full.toString('hex')],
    );
    if (n % 256 > 0) {
      await db.query('INSERT INTO merkle_tile_parts (org_id, level, idx, width, hashes) VALUES ($1, $2, $3, $4, decode($5, \'hex\'))', [orgId, level, Math.floor(n / 256), n % 256, full.subarray(0, (n % 256) * 32).toString('hex')]);
    }
    entry = perfectRoot(Array.from({ length: 256 }, (_, i) => full.subarray(i * 32, (i + 1) * 32)));
  }
  await db.query('INSERT INTO merkle_logs (org_id, size) VALUES ($1, $2) ON CONFLICT (org_id) DO UPDATE SET size = excluded.size', [orgId, size]);
  // Its events are gone (as after retention): proofs do not look for them.
  await db.query('INSERT INTO audit_retention_marks (org_id, removed_through_seq) VALUES ($1, $2)', [orgId, size]);
}

/** The relations the log adds to per event (its checkpoints apart): each table's heap, TOAST, TOAST index and indexes. */
const LOG_TABLES = ['merkle_tiles', 'merkle_tile_parts', 'merkle_logs'];

async function logBytes(db: Db, tables: readonly string[], events: number): Promise<LogBytes> {
  const bytes = await relationBytes(db, tables);
  const byRelation = Object.fromEntries(Object.entries(bytes).map(([k, v]) => [k, v / events]));
  return { total: Object.values(byRelation).reduce((a, b) => a + b, 0), byRelation };
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

async function relationBytes(db: Db, tables: readonly string[]): Promise<Record<string, number>> {
  const r = await db.query<{ name: string; bytes: string }>(
    `SELECT c.relname || x.part AS name, x.bytes FROM pg_class c LEFT JOIN pg_class t ON t.oid = c.reltoastrelid,
     LATERAL (VALUES
       (' heap', pg_relation_size(c.oid) + pg_relation_size(c.oid, 'fsm') + pg_relation_size(c.oid, 'vm')),
       (' indexes', (SELECT coalesce(sum(pg_total_relation_size(i.indexrelid)), 0) FROM pg_index i WHERE i.indrelid = c.oid)),
       (' TOAST', coalesce(pg_relation_size(t.oid) + pg_relation_size(t.oid, 'fsm') + pg_relation_size(t.oid, 'vm'), 0)),
       (' TOAST index', (SELECT coalesce(sum(pg_total_relation_size(i.indexrelid)), 0) FROM pg_index i WHERE i.indrelid = t.oid))
     ) AS x(part, bytes)
     WHERE c.relname = ANY($1::text[]) AND c.relkind = 'r' ORDER BY c.relname, x.part`,
    [tables],
  );
  return Object.fromEntries(r.rows.map((x) => [x.name, Number(x.bytes)]));
}

async function vacuumLog(db: Db): Promise<void> {
  for (const t of LOG_TABLES) await db.query(`VACUUM ${t}`);
}

/**
 * The log's steady growth without VACUUM FULL: after a plain VACUUM every `vacuumEvery` appends (as autovacuum would,
 * its dead versions reused), the bytes the log tables grow per leaf from the first VACUUM to the last.
 */
async function steadyGrowth(db: Db, orgId: string, merkle: ReturnType<typeof createMerkleStep>, work: NewAuditEvent[][], vacuumEvery: number): Promise<number> {
  const marks: { leaves: number; bytes: number }[] = [];
  for (let i = 0; i < work.length; i++) {
    const request = prepareRequest({ events: work[i] });
    merkle.prepare(request.fresh.map((p) => p.event));
    await db.transaction(async (tx) => {
      const lastSeq = await lockOrgSeq(tx, orgId);
      const out = await appendLocked(tx, orgId, lastSeq, [request], ROW_SINKS.copy, new Date());
      const done = out.outcomes.flatMap((o) => (o.ok ? [o.value] : []));
      await merkle.appended(tx, orgId, lastSeq, done.flatMap((a) => a.records), done.flatMap((a) => a.stored));
    });
    if ((i + 1) % vacuumEvery === 0) {
      await vacuumLog(db);
      const leaves = Number((await db.query<{ size: string }>('SELECT size FROM merkle_logs WHERE org_id = $1', [orgId])).rows[0].size);
      marks.push({ leaves, bytes: sum(await relationBytes(db, LOG_TABLES)) });
    }
  }
  const [a, b] = [marks[0], marks[marks.length - 1]];
  return (b.bytes - a.bytes) / (b.leaves - a.leaves);
}

export async function runMerkleLog(ctx: RunContext): Promise<MerkleLogResult> {
  const bench = await createDatabase();
  const db = createPgDb({ connectionString: bench.url, max: 1 });
  try {
    await migrate(db);
    const org = async (name: string) => (await db.query<{ id: string }>('INSERT INTO organizations (name) VALUES ($1) RETURNING id', [name])).rows[0].id;
    const on = await org('on');
    const off = await org('off');
    const merkle = createMerkleStep({ logger: pino({ level: 'silent' }), catchupEvents: 1000, catchupMaxBytes: 4 * 1024 * 1024 });
    const rounds: MerkleLogResult['rounds'] = [];
    // After each round, a plain VACUUM of the log tables (as autovacuum would) and their size.
    const roundMarks: { leaves: number; bytes: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      const row = { offUsPerEvent: 0, onUsPerEvent: 0 };
      for (const side of order) {
        const work = batches(1000 + 10 * r + (side === 'on' ? 1 : 2), APPENDS * 2);
        const us = await appendAll(db, side === 'on' ? on : off, work, side === 'on' ? merkle : null);
        if (side === 'on') row.onUsPerEvent = us;
        else row.offUsPerEvent = us;
      }
      await vacuumLog(db);
      const leaves = Number((await db.query<{ size: string }>('SELECT size FROM merkle_logs WHERE org_id = $1', [on])).rows[0].size);
      roundMarks.push({ leaves, bytes: sum(await relationBytes(db, LOG_TABLES)) });
      ctx.log(`    round ${r + 1}: log off ${row.offUsPerEvent.toFixed(1)} us, on ${row.onUsPerEvent.toFixed(1)} us per event (x${(row.onUsPerEvent / row.offUsPerEvent).toFixed(3)})`);
      rounds.push(row);
    }
    // The leaves appended (a batch of 500 lines can make a few more events than 500).
    const events = Number((await db.query<{ size: string }>('SELECT size FROM merkle_logs WHERE org_id = $1', [on])).rows[0].size);
    const hashes = Number((await db.query<{ n: string }>('SELECT sum(octet_length(hashes)) AS n FROM merkle_tile_hashes WHERE org_id = $1', [on])).rows[0].n) / events;
    const steadyRounds = (roundMarks[ROUNDS - 1].bytes - roundMarks[0].bytes) / (roundMarks[ROUNDS - 1].leaves - roundMarks[0].leaves);
    // As appended: the dead versions of the last round's partial tiles (until vacuum) included.
    const asAppended = await logBytes(db, LOG_TABLES, events);
    await vacuumLog(db);
    const afterVacuum = await logBytes(db, LOG_TABLES, events);
    for (const t of LOG_TABLES) await db.query(`VACUUM FULL ${t}`);
    const full = await logBytes(db, LOG_TABLES, events);
    // Checkpoints as the default issues them to an organization appending steadily: one per CHECKPOINT_EVERY events.
    const signer = signerOf('audit.example.com', randomBytes(32));
    for (let size = CHECKPOINT_EVERY; size <= events; size += CHECKPOINT_EVERY) {
      const root = randomBytes(32);
      await db.query('INSERT INTO merkle_checkpoints (org_id, size, root, note) VALUES ($1, $2, $3, $4)', [on, size, root, signNote(checkpointText({ origin: originOf('audit.example.com', on), size, root }), [signer])]);
    }
    const checkpoints = await logBytes(db, ['merkle_checkpoints'], events);
    const bytesPerEvent = { hashes, onDisk: full.total, asAppended: asAppended.total, afterVacuum: afterVacuum.total, checkpoints: checkpoints.total, byRelation: full.byRelation };
    const parts = (b: LogBytes) => Object.entries(b.byRelation).filter(([, v]) => v >= 0.005).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
    ctx.log(`    bytes per event (${events} leaves): ${hashes.toFixed(2)} of hashes; on disk (tiles and log rows, indexes and TOAST included) ${full.total.toFixed(2)} after VACUUM FULL, ${afterVacuum.total.toFixed(2)} after VACUUM, ${asAppended.total.toFixed(2)} as appended; checkpoints (one per ${CHECKPOINT_EVERY} events) ${checkpoints.total.toFixed(2)} more`);
    ctx.log(`      after VACUUM FULL: ${parts(full)}`);
    ctx.log(`      as appended: ${parts(asAppended)}`);
    const small = await org('small');
    const smallWork = batches(2000, Math.ceil((SMALL_APPENDS * SMALL_APPEND) / 500)).flat();
    const smallAppends = Array.from({ length: SMALL_APPENDS }, (_, i) => smallWork.slice(i * SMALL_APPEND, (i + 1) * SMALL_APPEND));
    const steadyBytesPerEvent = { rounds: steadyRounds, smallAppends: await steadyGrowth(db, small, merkle, smallAppends, 500) };
    ctx.log(`    steady growth per leaf, plain VACUUM between, never VACUUM FULL: ${steadyRounds.toFixed(2)} B (rounds 2-3, appends of ~1,000 events); ${steadyBytesPerEvent.smallAppends.toFixed(2)} B (appends of ${SMALL_APPEND} events, VACUUM every 500)`);

    const big = await org('big');
    await bigLog(db, big, BIG);
    const incl: number[] = [];
    const cons: number[] = [];
    for (let i = 0; i < PROOFS; i++) {
      const seq = 1 + Math.floor(Math.random() * BIG);
      let t0 = nowMs();
      await proveInclusion(db, big, seq, BIG, []);
      incl.push(nowMs() - t0);
      t0 = nowMs();
      await proveConsistency(db, big, seq, BIG, []);
      cons.push(nowMs() - t0);
    }
    const proofsAt5M = { inclusionMs: { p50: pct(incl, 0.5), p99: pct(incl, 0.99) }, consistencyMs: { p50: pct(cons, 0.5), p99: pct(cons, 0.99) } };
    ctx.log(`    proofs at 5M events: inclusion p50 ${proofsAt5M.inclusionMs.p50.toFixed(2)} ms, p99 ${proofsAt5M.inclusionMs.p99.toFixed(2)} ms; consistency p50 ${proofsAt5M.consistencyMs.p50.toFixed(2)} ms, p99 ${proofsAt5M.consistencyMs.p99.toFixed(2)} ms`);
    const slowdown = median(rounds.map((x) => x.onUsPerEvent / x.offUsPerEvent));
    return { events, rounds, slowdown, bytesPerEvent, steadyBytesPerEvent, proofsAt5M };
  } finally {
    await db.close();
    await bench.drop();
  }
}
