// Ingest scenarios: 4 sender processes post CloudWatch batches for 20 s; events stored per second against a psql \copy
// of the same rows in the same trial. `ingest` (the main one): awslogs deliveries (gzip + base64, CloudWatch event ids,
// each body sent once), each row sink in turn, COPY into an empty clone of the table with the same indexes, all of
// Postgres's CPU counted on both sides. `ingestPlain`: spec bodies without ids sent round and round, COPY into the table.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { nowMs } from '../lib/clock.js';
import { cpuSeconds, machineCpuSeconds } from '../lib/cpu.js';
import type { RunContext } from '../lib/context.js';
import { Histogram } from '../lib/histogram.js';
import { startPgCpuMeter } from '../lib/pg-cpu.js';
import { createDatabase, createOrg, serviceEnv, type BenchDatabase } from '../lib/provision.js';
import { psql } from '../lib/psql.js';
import { startServer, TMP } from '../lib/service.js';
import { runTrials } from '../lib/trials.js';
import { startWorker } from '../lib/workers.js';
import type { SendLoopDone } from '../lib/send-loop.js';

const SENDERS = 4;
const BATCH = 500;
const DURATION_MS = 20_000;
/** awslogs bodies each sender builds before the clock (each sent once): 4 x 300 x 500 = 600,000 events at most. */
const AWSLOGS_BODIES = 300;
/** The COPY baseline copies at most this many of the stored rows (it bounds the run time). */
const COPY_MAX_ROWS = 400_000;
const TABLE_COLUMNS = 'org_id, seq, occurred_at, received_at, source, type, server_id, session_id, tool_name, action, latency_ms, payload, metadata, dedupe_key, context_id';

/** A row sink (EVENT_LOG_SINK); `copy-checked`: the COPY sink with identities looked up before every append (EVENT_LOG_OPTIMISTIC_APPEND=false). */
export type Sink = 'copy' | 'insert' | 'copy-checked';

const SINK_ENV: Record<Sink, Record<string, string>> = {
  copy: { EVENT_LOG_SINK: 'copy' },
  insert: { EVENT_LOG_SINK: 'insert' },
  'copy-checked': { EVENT_LOG_SINK: 'copy', EVENT_LOG_OPTIMISTIC_APPEND: 'false' },
};

export interface IngestResult {
  workload: 'awslogs' | 'plain';
  /** EVENT_LOG_SINK of the service; null: its default. */
  sink: Sink | null;
  senders: number;
  batchSize: number;
  seconds: number;
  requests: number;
  failedRequests: number;
  statuses: Record<string, number>;
  eventsStored: number;
  eventsPerSecond: number;
  requestLatencyMs: { p50: number; p99: number; max: number };
  /** CPU per 1,000 events stored: the service process, all of Postgres (its backends of the database and background processes), the senders. */
  cpuMsPer1000Events: CpuPer1000;
  /** Where the machine's cores went during the run, in cores (CPU seconds per second). */
  cores: { total: number; service: number; postgres: number; senders: number; otherBusy: number; idle: number };
  copy: { rows: number; seconds: number; rowsPerSecond: number; into: 'clone' | 'table'; postgresCpuMsPer1000Rows: number };
  ratioToCopy: number;
  /** Postgres CPU per event of the service run over Postgres CPU per row of the COPY. */
  postgresCpuToCopy: number;
}

export interface CpuPer1000 {
  service: number;
  postgres: number;
  senders: number;
}

export interface TrialFigures {
  sink: Sink | null;
  eventsPerSecond: number;
  copyRowsPerSecond: number;
  ratioToCopy: number;
  postgresCpuToCopy: number;
  copyPostgresCpuMsPer1000Rows: number;
  cpuMsPer1000Events: CpuPer1000;
  cores: IngestResult['cores'];
}

export interface IngestSummary extends IngestResult {
  /** Every trial of every sink; the figures above are the median trial (by ratio to COPY) of the first sink. */
  trials: TrialFigures[];
  /** Per sink: the median trial's figures. */
  bySink?: Partial<Record<Sink, TrialFigures>>;
}

const TRIALS = Number(process.env.BENCH_TRIALS ?? 3);
const SINKS: Sink[] = ['copy', 'insert'];

const figures = (r: IngestResult): TrialFigures => ({
  sink: r.sink,
  eventsPerSecond: r.eventsPerSecond,
  copyRowsPerSecond: r.copy.rowsPerSecond,
  ratioToCopy: r.ratioToCopy,
  postgresCpuToCopy: r.postgresCpuToCopy,
  copyPostgresCpuMsPer1000Rows: r.copy.postgresCpuMsPer1000Rows,
  cpuMsPer1000Events: r.cpuMsPer1000Events,
  cores: r.cores,
});

/** The main ingest scenario: awslogs deliveries, each sink in turn within every trial (their order alternating). */
export async function runIngest(ctx: RunContext): Promise<IngestSummary> {
  const sinks = (process.env.BENCH_SINKS?.split(',') as Sink[] | undefined) ?? SINKS;
  const all: IngestResult[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const order = i % 2 === 0 ? sinks : [...sinks].reverse();
    for (const sink of order) {
      ctx.log(`  trial ${i + 1} of ${TRIALS}, ${sink} sink`);
      all.push(await runIngestTrial(ctx, i, { workload: 'awslogs', sink, copyInto: 'clone' }));
    }
  }
  const bySink: Partial<Record<Sink, TrialFigures>> = {};
  let main: IngestResult | null = null;
  for (const sink of sinks) {
    const own = all.filter((r) => r.sink === sink).sort((a, b) => a.ratioToCopy - b.ratioToCopy);
    const median = own[Math.floor((own.length - 1) / 2)];
    bySink[sink] = figures(median);
    main ??= median;
  }
  return { ...main!, trials: all.map(figures), bySink };
}

export interface IngestLogSummary {
  trials: { log: 'off' | 'on'; eventsPerSecond: number; serviceCpuMsPer1000Events: number; postgresCpuMsPer1000Events: number }[];
  /** Median over trials of events stored per second with the verifiable log on / off (the same trial's). */
  ratio: number;
}

/** awslogs ingest with the verifiable log off and on (MERKLE_LOG), in turn within every trial (order alternating). */
export async function runIngestLog(ctx: RunContext): Promise<IngestLogSummary> {
  const trials: IngestLogSummary['trials'] = [];
  const ratios: number[] = [];
  const n = Number(process.env.BENCH_LOG_TRIALS ?? 2);
  for (let i = 0; i < n; i++) {
    const pair: Record<'off' | 'on', number> = { off: 0, on: 0 };
    for (const log of i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
      ctx.log(`  trial ${i + 1} of ${n}, verifiable log ${log}`);
      const r = await runIngestTrial(ctx, i, { workload: 'awslogs', sink: null, copyInto: 'clone', env: { MERKLE_LOG: log === 'on' ? 'true' : 'false' }, label: `log-${log}` });
      pair[log] = r.eventsPerSecond;
      trials.push({ log, eventsPerSecond: r.eventsPerSecond, serviceCpuMsPer1000Events: r.cpuMsPer1000Events.service, postgresCpuMsPer1000Events: r.cpuMsPer1000Events.postgres });
    }
    ratios.push(pair.on / pair.off);
    ctx.log(`    log on / off: x${(pair.on / pair.off).toFixed(3)} events stored per second`);
  }
  return { trials, ratio: [...ratios].sort((a, b) => a - b)[Math.floor((ratios.length - 1) / 2)] };
}

/** The plain scenario: spec bodies without event ids, resent round and round; COPY into the table itself. */
export async function runIngestPlain(ctx: RunContext): Promise<IngestSummary> {
  const t = await runTrials(TRIALS, (i) => {
    ctx.log(`  trial ${i + 1} of ${TRIALS}`);
    return runIngestTrial(ctx, i, { workload: 'plain', sink: null, copyInto: 'table' });
  }, (r) => r.ratioToCopy);
  return { ...t.median, trials: t.all.map(figures) };
}

interface TrialOptions {
  workload: 'awslogs' | 'plain';
  sink: Sink | null;
  copyInto: 'clone' | 'table';
  /** More settings of the service (and a name for them in its log file). */
  env?: Record<string, string>;
  label?: string;
}

async function checkpoint(db: BenchDatabase): Promise<void> {
  await db.query('CHECKPOINT');
}

async function runIngestTrial(ctx: RunContext, trial: number, opts: TrialOptions): Promise<IngestResult> {
  const db = await createDatabase();
  const csv = path.join(TMP, `copy-${db.name}.csv`);
  try {
    const env = serviceEnv(db, `${ctx.redisPrefix}ingest:`, ctx.adminToken, { ...(opts.sink ? SINK_ENV[opts.sink] : {}), ...opts.env });
    const svc = await startServer(`ingest-${opts.workload}-${opts.sink ?? 'default'}${opts.label ? `-${opts.label}` : ''}-${trial + 1}`, ctx.entry.args, env);
    let done: SenderDone[];
    let serviceCpu = 0;
    let pgCpu = 0;
    let senderCpu = 0;
    let machine = { busy: 0, idle: 0 };
    let orgId: string;
    try {
      const org = await createOrg(svc.url, ctx.adminToken, 'ingest bench');
      orgId = org.id;
      const workers = Array.from({ length: SENDERS }, (_, i) =>
        startWorker('workloads/ingest-sender.ts', { url: svc.url, key: org.key, seed: 1000 * (trial + 1) + i, batchSize: BATCH, durationMs: DURATION_MS, format: opts.workload, bodies: AWSLOGS_BODIES }),
      );
      try {
        await Promise.all(workers.map((w) => w.next('ready', 300_000)));
        ctx.log(`    ${SENDERS} senders x ${BATCH}-line ${opts.workload} CloudWatch bodies for ${DURATION_MS / 1000} s${opts.sink ? `, ${opts.sink} sink` : ''}`);
        const senderPids = workers.map((w) => w.child.pid!);
        const sendersCpu = () => senderPids.reduce((a, pid) => a + cpuSeconds(pid), 0);
        await checkpoint(db);
        const cpu0 = cpuSeconds(svc.pid);
        const pg = await startPgCpuMeter(db);
        const senders0 = sendersCpu();
        const machine0 = machineCpuSeconds();
        for (const w of workers) w.send({ type: 'go' });
        done = await Promise.all(workers.map((w) => w.next<SenderDone>('done', DURATION_MS + 60_000)));
        const machine1 = machineCpuSeconds();
        serviceCpu = cpuSeconds(svc.pid) - cpu0;
        senderCpu = sendersCpu() - senders0;
        machine = { busy: machine1.busy - machine0.busy, idle: machine1.idle - machine0.idle };
        pgCpu = await pg.stop();
        if (process.env.BENCH_DEBUG) {
          const m = await (await fetch(`${svc.url}/metrics`)).text();
          ctx.log(m.split('\n').filter((l) => l.startsWith('nodejs_eventloop_lag') || l.startsWith('nodejs_gc_duration_seconds_sum') || l.startsWith('audit_stream_write_transactions_total') || l.startsWith('audit_stream_grouped_writes_total')).join('\n'));
        }
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    } finally {
      await svc.stop();
    }

    const started = Math.min(...done.map((d) => d.started));
    const ended = Math.max(...done.map((d) => d.ended));
    const seconds = (ended - started) / 1000;
    if (done.some((d) => d.exhausted)) ctx.log(`    (a sender sent all its ${AWSLOGS_BODIES} bodies before ${DURATION_MS / 1000} s)`);
    const latency = new Histogram();
    const statuses: Record<string, number> = {};
    for (const d of done) {
      latency.merge(d.latency);
      for (const [s, n] of Object.entries(d.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
    }
    const requests = done.reduce((a, d) => a + d.requests, 0);
    const [{ n }] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM audit_events WHERE org_id = $1 AND source = 'cloudwatch'`, [orgId]);
    const eventsStored = Number(n);

    // Baseline: the very rows the service stored, written again with COPY: into an empty clone of the table with the
    // same indexes (no triggers), or into the table itself for another organization.
    ctx.log(`    ${eventsStored} events stored in ${seconds.toFixed(1)} s; COPY baseline into ${opts.copyInto === 'clone' ? 'an empty clone of the table' : 'the table'}`);
    let target = 'audit_events';
    let orgExpr = 'org_id';
    if (opts.copyInto === 'clone') {
      target = 'audit_events_copy';
      await db.query('CREATE TABLE audit_events_copy (LIKE audit_events INCLUDING ALL)');
    } else {
      const [{ id }] = await db.query<{ id: string }>(`INSERT INTO organizations (name) VALUES ('copy baseline') RETURNING id`);
      orgExpr = `'${id}'::uuid`;
    }
    await psql(db.url, `\\copy (SELECT ${orgExpr}, ${TABLE_COLUMNS.split(', ').slice(1).join(', ')} FROM audit_events WHERE org_id = '${orgId}' AND source = 'cloudwatch' ORDER BY seq LIMIT ${COPY_MAX_ROWS}) TO '${csv}' WITH (FORMAT csv)`);
    await checkpoint(db);
    const pgCopy = await startPgCpuMeter(db);
    const t0 = nowMs();
    await psql(db.url, `\\copy ${target} (${TABLE_COLUMNS}) FROM '${csv}' WITH (FORMAT csv)`);
    const copySeconds = (nowMs() - t0) / 1000;
    const copyPgCpu = await pgCopy.stop();
    const copyRows = Math.min(eventsStored, COPY_MAX_ROWS);
    const eventsPerSecond = eventsStored / seconds;
    const rowsPerSecond = copyRows / copySeconds;
    const { p50, p99, max } = latency.summary();
    const per1000 = (cpu: number) => (cpu * 1e6) / eventsStored;
    const copyPer1000 = (copyPgCpu * 1e6) / copyRows;
    const cores = (cpu: number) => (cpu / seconds).toFixed(2);
    ctx.log(
      `    ${Math.round(eventsPerSecond)} events/s vs COPY ${Math.round(rowsPerSecond)} rows/s = ${(eventsPerSecond / rowsPerSecond).toFixed(2)}x; ` +
        `CPU ms per 1,000 events: service ${per1000(serviceCpu).toFixed(1)}, Postgres ${per1000(pgCpu).toFixed(1)} (COPY ${copyPer1000.toFixed(1)} per 1,000 rows: ${(per1000(pgCpu) / copyPer1000).toFixed(2)}x), senders ${per1000(senderCpu).toFixed(1)}; ` +
        `cores: service ${cores(serviceCpu)}, Postgres ${cores(pgCpu)}, senders ${cores(senderCpu)}, other ${cores(machine.busy - serviceCpu - pgCpu - senderCpu)}, idle ${cores(machine.idle)}`,
    );
    return {
      workload: opts.workload,
      sink: opts.sink,
      senders: SENDERS,
      batchSize: BATCH,
      seconds,
      requests,
      failedRequests: requests - (statuses['200'] ?? 0),
      statuses,
      eventsStored,
      eventsPerSecond,
      requestLatencyMs: { p50, p99, max },
      cpuMsPer1000Events: { service: per1000(serviceCpu), postgres: per1000(pgCpu), senders: per1000(senderCpu) },
      cores: {
        total: (machine.busy + machine.idle) / seconds,
        service: serviceCpu / seconds,
        postgres: pgCpu / seconds,
        senders: senderCpu / seconds,
        otherBusy: (machine.busy - serviceCpu - pgCpu - senderCpu) / seconds,
        idle: machine.idle / seconds,
      },
      copy: { rows: copyRows, seconds: copySeconds, rowsPerSecond, into: opts.copyInto, postgresCpuMsPer1000Rows: copyPer1000 },
      ratioToCopy: eventsPerSecond / rowsPerSecond,
      postgresCpuToCopy: per1000(pgCpu) / copyPer1000,
    };
  } finally {
    rmSync(csv, { force: true });
    await db.drop();
  }
}

type SenderDone = SendLoopDone & { exhausted?: boolean };
