// The verifiable log's cost, in one process on Postgres: the same CloudWatch batches appended by the event log with the
// Merkle step and without it (interleaved rounds, separate organizations), the bytes per event the log adds, and the
// latency of inclusion and consistency proofs in a log of 5,000,000 events (its tiles written directly).
import { appendLocked, prepareRequest } from '../../src/audit/event-log/append.js';
import { ROW_SINKS } from '../../src/audit/event-log/event-log.js';
import { lockOrgSeq } from '../../src/audit/event-log/log-sql.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDb } from '../../src/db/pg-db.js';
import { proveConsistency, proveInclusion } from '../../src/verify/log-proofs.js';
import { createLeafHasher } from '../../src/verify/leaf-hashing.js';
import { createMerkleStep } from '../../src/verify/merkle-append.js';
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

export interface MerkleLogResult {
  events: number;
  rounds: { offUsPerEvent: number; onUsPerEvent: number }[];
  /** Median over rounds of on / off wall time per event. */
  slowdown: number;
  bytesPerEvent: { hashes: number; onDisk: number };
  proofsAt5M: { inclusionMs: { p50: number; p99: number }; consistencyMs: { p50: number; p99: number } };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function appendAll(db: Db, orgId: string, work: ReturnType<typeof batches>, merkle: ReturnType<typeof createMerkleStep> | null): Promise<number> {
  const t0 = nowMs();
  let events = 0;
  for (let i = 0; i < work.length; i += 2) {
    const requests = [prepareRequest({ events: work[i] }), prepareRequest({ events: work[i + 1] })];
    await db.transaction(async (tx) => {
      const lastSeq = await lockOrgSeq(tx, orgId);
      const out = await appendLocked(tx, orgId, lastSeq, requests, ROW_SINKS.copy, new Date());
      if (merkle) await merkle.appended(tx, orgId, lastSeq, out.rows, out.contexts);
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
      `INSERT INTO merkle_tiles (org_id, level, idx, hashes)
       SELECT $1, $2::int, t, substring(decode($4, 'hex') FROM 1 FOR least(256, $3::bigint - t * 256)::int * 32)
       FROM generate_series(0, ($3::bigint - 1) / 256) AS t`,
      [orgId, level, n, full.toString('hex')],
    );
    entry = perfectRoot(Array.from({ length: 256 }, (_, i) => full.subarray(i * 32, (i + 1) * 32)));
  }
  await db.query('INSERT INTO merkle_logs (org_id, size) VALUES ($1, $2) ON CONFLICT (org_id) DO UPDATE SET size = excluded.size', [orgId, size]);
  // Its events are gone (as after retention): proofs do not look for them.
  await db.query('INSERT INTO audit_retention_marks (org_id, removed_through_seq) VALUES ($1, $2)', [orgId, size]);
}

export async function runMerkleLog(ctx: RunContext): Promise<MerkleLogResult> {
  const bench = await createDatabase();
  const db = createPgDb({ connectionString: bench.url, max: 1 });
  const hasher = createLeafHasher();
  try {
    await migrate(db);
    const org = async (name: string) => (await db.query<{ id: string }>('INSERT INTO organizations (name) VALUES ($1) RETURNING id', [name])).rows[0].id;
    const on = await org('on');
    const off = await org('off');
    const merkle = createMerkleStep({ logger: pino({ level: 'silent' }), catchupEvents: 1000, catchupMaxBytes: 4 * 1024 * 1024, hasher });
    const rounds: MerkleLogResult['rounds'] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const);
      const row = { offUsPerEvent: 0, onUsPerEvent: 0 };
      for (const side of order) {
        const work = batches(1000 + 10 * r + (side === 'on' ? 1 : 2), APPENDS * 2);
        const us = await appendAll(db, side === 'on' ? on : off, work, side === 'on' ? merkle : null);
        if (side === 'on') row.onUsPerEvent = us;
        else row.offUsPerEvent = us;
      }
      ctx.log(`    round ${r + 1}: log off ${row.offUsPerEvent.toFixed(1)} us, on ${row.onUsPerEvent.toFixed(1)} us per event (x${(row.onUsPerEvent / row.offUsPerEvent).toFixed(3)})`);
      rounds.push(row);
    }
    const events = ROUNDS * APPENDS * 2 * 500;
    await db.query('VACUUM FULL merkle_tiles');
    await db.query('VACUUM FULL merkle_logs');
    const sizes = (
      await db.query<{ hashes: string; disk: string }>(
        `SELECT (SELECT sum(octet_length(hashes)) FROM merkle_tiles WHERE org_id = $1) AS hashes,
                pg_total_relation_size('merkle_tiles') + pg_total_relation_size('merkle_logs') AS disk`,
        [on],
      )
    ).rows[0];
    const bytesPerEvent = { hashes: Number(sizes.hashes) / events, onDisk: Number(sizes.disk) / events };
    ctx.log(`    bytes per event: ${bytesPerEvent.hashes.toFixed(1)} of hashes, ${bytesPerEvent.onDisk.toFixed(1)} on disk (tiles and log rows, indexes included)`);

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
    return { events, rounds, slowdown, bytesPerEvent, proofsAt5M };
  } finally {
    await hasher.close();
    await db.close();
    await bench.drop();
  }
}
