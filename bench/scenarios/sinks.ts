// Row sinks against each other on each backend, in one process: the same CloudWatch batches appended by the event log
// with the COPY sink and the INSERT sink in turn (interleaved), wall time and this process's CPU per event. PGlite runs
// in this process (so its CPU is here too); Postgres's backend CPU is read from /proc.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { appendLocked, prepareRequest } from '../../src/audit/event-log/append.js';
import { ROW_SINKS } from '../../src/audit/event-log/event-log.js';
import { lockOrgSeq } from '../../src/audit/event-log/log-sql.js';
import type { RowSinkName } from '../../src/audit/event-log/row-sink.js';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDb } from '../../src/db/pg-db.js';
import { createPgliteDb } from '../../src/db/pglite-db.js';
import { logBatchToEvents } from '../../src/ingest/log-batch-events.js';
import { nowMs } from '../lib/clock.js';
import type { RunContext } from '../lib/context.js';
import { cpuSeconds } from '../lib/cpu.js';
import { createDatabase } from '../lib/provision.js';
import { createLogGenerator } from '../workloads/cloudwatch-lines.js';

const BATCH = 500;
/** Appends of 2 batches (1,000 events, as a group commit of two requests) per sink per round. */
const APPENDS = Number(process.env.BENCH_SINK_APPENDS ?? 40);
const ROUNDS = 3;

export interface SinkFigures {
  sink: RowSinkName;
  /** Wall time of the appends per event (lock, reads, rows, bookkeeping, commit). */
  wallUsPerEvent: number;
  /** This process's CPU per event (on PGlite, Postgres's too). */
  processCpuUsPerEvent: number;
  /** Postgres backends' CPU per event (Postgres only). */
  postgresCpuUsPerEvent: number | null;
}

export interface SinksResult {
  events: number;
  backends: Record<'postgres' | 'pglite', { rounds: SinkFigures[][] }>;
}

let idSeq = 0n;
export function batches(seed: number, n: number): NewAuditEvent[][] {
  const gen = createLogGenerator(seed, BATCH);
  return Array.from({ length: n }, () => {
    const body = gen.next();
    return logBatchToEvents(
      {
        format: 'subscription', messageType: 'DATA_MESSAGE', logGroup: body.logGroup, logStream: body.logStream, owner: '123456789012', subscriptionFilters: ['audit-stream'], policyLevel: null,
        events: body.events.map((e) => ({ id: String(10n ** 55n + BigInt(seed) * 10n ** 30n + idSeq++), message: e.message, timestamp: new Date(e.timestamp), rawTimestamp: Date.parse(e.timestamp), extractedFields: null })),
      },
      { source: 'cloudwatch', receivedAt: new Date(), payloadFormat: 'awslogs' },
    ).events;
  });
}

async function measure(db: Db, orgId: string, sink: RowSinkName, work: NewAuditEvent[][], backendPid: number | null): Promise<SinkFigures> {
  const cpu0 = process.cpuUsage();
  const pg0 = backendPid ? cpuSeconds(backendPid) : 0;
  const t0 = nowMs();
  let events = 0;
  for (let i = 0; i < work.length; i += 2) {
    const requests = [prepareRequest({ events: work[i] }), prepareRequest({ events: work[i + 1] })];
    await db.transaction(async (tx) => appendLocked(tx, orgId, await lockOrgSeq(tx, orgId), requests, ROW_SINKS[sink], new Date()));
    events += work[i].length + work[i + 1].length;
  }
  const wall = nowMs() - t0;
  const cpu = process.cpuUsage(cpu0);
  return {
    sink,
    wallUsPerEvent: (wall * 1000) / events,
    processCpuUsPerEvent: (cpu.user + cpu.system) / events,
    postgresCpuUsPerEvent: backendPid ? ((cpuSeconds(backendPid) - pg0) * 1e6) / events : null,
  };
}

async function runOn(ctx: RunContext, kind: 'postgres' | 'pglite'): Promise<SinkFigures[][]> {
  let db: Db;
  let cleanup: () => Promise<void>;
  if (kind === 'postgres') {
    const bench = await createDatabase();
    db = createPgDb({ connectionString: bench.url, max: 1 });
    cleanup = async () => {
      await db.close();
      await bench.drop();
    };
  } else {
    const dir = await mkdtemp(path.join(tmpdir(), 'as-bench-sinks-'));
    db = await createPgliteDb(dir);
    cleanup = async () => {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    };
  }
  try {
    await migrate(db);
    const orgs: Record<RowSinkName, string> = { copy: '', insert: '' };
    for (const s of ['copy', 'insert'] as const) orgs[s] = (await db.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ($1) RETURNING id`, [s])).rows[0].id;
    // One connection (max 1): its backend's CPU is the append's.
    const pid = kind === 'postgres' ? Number((await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid) : null;
    const rounds: SinkFigures[][] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const order: RowSinkName[] = r % 2 === 0 ? ['copy', 'insert'] : ['insert', 'copy'];
      const round: SinkFigures[] = [];
      for (const sink of order) {
        const work = batches(100 * r + (sink === 'copy' ? 1 : 2), APPENDS * 2);
        const f = await measure(db, orgs[sink], sink, work, pid);
        ctx.log(`    ${kind} ${sink}: ${f.wallUsPerEvent.toFixed(1)} us wall, ${f.processCpuUsPerEvent.toFixed(1)} us process CPU${f.postgresCpuUsPerEvent === null ? '' : `, ${f.postgresCpuUsPerEvent.toFixed(1)} us Postgres CPU`} per event`);
        round.push(f);
      }
      rounds.push(round);
    }
    return rounds;
  } finally {
    await cleanup();
  }
}

export async function runSinks(ctx: RunContext): Promise<SinksResult> {
  return { events: APPENDS * 2 * BATCH, backends: { postgres: { rounds: await runOn(ctx, 'postgres') }, pglite: { rounds: await runOn(ctx, 'pglite') } } };
}
