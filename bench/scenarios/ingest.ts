// Ingest scenario: 4 sender processes post CloudWatch batches for 20 s; events stored per second vs a psql \copy of the same rows (3 trials).
import { rmSync } from 'node:fs';
import path from 'node:path';
import { nowMs } from '../lib/clock.js';
import { cpuSeconds, machineCpuSeconds } from '../lib/cpu.js';
import type { RunContext } from '../lib/context.js';
import { Histogram } from '../lib/histogram.js';
import { createDatabase, createOrg, serviceEnv } from '../lib/provision.js';
import { psql } from '../lib/psql.js';
import { startServer, TMP } from '../lib/service.js';
import { runTrials } from '../lib/trials.js';
import { startWorker } from '../lib/workers.js';
import type { SendLoopDone } from '../lib/send-loop.js';

const SENDERS = 4;
const BATCH = 500;
const DURATION_MS = 20_000;
/** The COPY baseline copies at most this many of the stored rows (it bounds the run time). */
const COPY_MAX_ROWS = 400_000;
const COLUMNS = 'org_id, seq, occurred_at, source, type, server_id, session_id, tool_name, action, latency_ms, payload, metadata, dedupe_key';

export interface IngestResult {
  senders: number;
  batchSize: number;
  seconds: number;
  requests: number;
  failedRequests: number;
  statuses: Record<string, number>;
  eventsStored: number;
  eventsPerSecond: number;
  requestLatencyMs: { p50: number; p99: number; max: number };
  /** CPU the service process, its Postgres backends and the sender processes used during the run, per 1,000 events stored. */
  cpuMsPer1000Events: CpuPer1000;
  /** Where the machine's cores went during the run, in cores (CPU seconds per second): the same processes, the rest of the machine's busy time, idle. */
  cores: { total: number; service: number; postgres: number; senders: number; otherBusy: number; idle: number };
  copy: { rows: number; seconds: number; rowsPerSecond: number };
  ratioToCopy: number;
}

export interface CpuPer1000 {
  service: number;
  postgres: number;
  senders: number;
}

export interface IngestSummary extends IngestResult {
  /** Every trial; the figures above are the median trial's (by ratio to COPY). */
  trials: { eventsPerSecond: number; copyRowsPerSecond: number; ratioToCopy: number; cpuMsPer1000Events: CpuPer1000; cores: IngestResult['cores'] }[];
}

const TRIALS = 3;

export async function runIngest(ctx: RunContext): Promise<IngestSummary> {
  const t = await runTrials(TRIALS, (i) => {
    ctx.log(`  trial ${i + 1} of ${TRIALS}`);
    return runIngestTrial(ctx, i);
  }, (r) => r.ratioToCopy);
  return { ...t.median, trials: t.all.map((r) => ({ eventsPerSecond: r.eventsPerSecond, copyRowsPerSecond: r.copy.rowsPerSecond, ratioToCopy: r.ratioToCopy, cpuMsPer1000Events: r.cpuMsPer1000Events, cores: r.cores })) };
}

type SenderDone = SendLoopDone;

async function runIngestTrial(ctx: RunContext, trial: number): Promise<IngestResult> {
  const db = await createDatabase();
  const csv = path.join(TMP, `copy-${db.name}.csv`);
  try {
    const svc = await startServer(`ingest-${trial + 1}`, ctx.entry.args, serviceEnv(db, `${ctx.redisPrefix}ingest:`, ctx.adminToken));
    let done: SenderDone[];
    let serviceCpu = 0;
    let pgCpu = 0;
    let senderCpu = 0;
    let machine = { busy: 0, idle: 0 };
    let copyOrg: string;
    let orgId: string;
    try {
      const org = await createOrg(svc.url, ctx.adminToken, 'ingest bench');
      orgId = org.id;
      copyOrg = (await createOrg(svc.url, ctx.adminToken, 'copy baseline')).id;
      const workers = Array.from({ length: SENDERS }, (_, i) => startWorker('workloads/ingest-sender.ts', { url: svc.url, key: org.key, seed: 1000 * (trial + 1) + i, batchSize: BATCH, durationMs: DURATION_MS }));
      try {
        await Promise.all(workers.map((w) => w.next('ready')));
        ctx.log(`    ${SENDERS} senders x ${BATCH}-line CloudWatch batches for ${DURATION_MS / 1000} s`);
        const backends = async () => (await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [db.name])).map((r) => r.pid);
        const senderPids = workers.map((w) => w.child.pid!);
        const sendersCpu = () => senderPids.reduce((a, pid) => a + cpuSeconds(pid), 0);
        const cpu0 = cpuSeconds(svc.pid);
        const pgStart = new Map((await backends()).map((pid) => [pid, cpuSeconds(pid)]));
        const senders0 = sendersCpu();
        const machine0 = machineCpuSeconds();
        for (const w of workers) w.send({ type: 'go' });
        done = await Promise.all(workers.map((w) => w.next<SenderDone>('done', DURATION_MS + 60_000)));
        const machine1 = machineCpuSeconds();
        serviceCpu = cpuSeconds(svc.pid) - cpu0;
        senderCpu = sendersCpu() - senders0;
        machine = { busy: machine1.busy - machine0.busy, idle: machine1.idle - machine0.idle };
        if (process.env.BENCH_DEBUG) {
          const m = await (await fetch(`${svc.url}/metrics`)).text();
          ctx.log(m.split('\n').filter((l) => l.startsWith('nodejs_eventloop_lag') || l.startsWith('nodejs_gc_duration_seconds_sum') || l.startsWith('audit_stream_write_transactions_total') || l.startsWith('audit_stream_grouped_writes_total')).join('\n'));
        }
        // Backends open at the start count from then, ones opened during the run from their start.
        pgCpu = (await backends()).reduce((a, pid) => a + (cpuSeconds(pid) || 0) - (pgStart.get(pid) ?? 0), 0);
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    } finally {
      await svc.stop();
    }

    const started = Math.min(...done.map((d) => d.started));
    const ended = Math.max(...done.map((d) => d.ended));
    const seconds = (ended - started) / 1000;
    const latency = new Histogram();
    const statuses: Record<string, number> = {};
    for (const d of done) {
      latency.merge(d.latency);
      for (const [s, n] of Object.entries(d.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
    }
    const requests = done.reduce((a, d) => a + d.requests, 0);
    const [{ n }] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM audit_events WHERE org_id = $1 AND source = 'cloudwatch'`, [orgId]);
    const eventsStored = Number(n);

    // Baseline: the very rows the service stored, written again with COPY into the same table (for another organization).
    ctx.log(`    ${eventsStored} events stored in ${seconds.toFixed(1)} s; COPY baseline`);
    await psql(
      db.url,
      `\\copy (SELECT '${copyOrg}'::uuid, seq, occurred_at, source, type, server_id, session_id, tool_name, action, latency_ms, payload, metadata, dedupe_key FROM audit_events WHERE org_id = '${orgId}' AND source = 'cloudwatch' ORDER BY seq LIMIT ${COPY_MAX_ROWS}) TO '${csv}' WITH (FORMAT csv)`,
    );
    const t0 = nowMs();
    await psql(db.url, `\\copy audit_events (${COLUMNS}) FROM '${csv}' WITH (FORMAT csv)`);
    const copySeconds = (nowMs() - t0) / 1000;
    const [{ c }] = await db.query<{ c: string }>('SELECT count(*) AS c FROM audit_events WHERE org_id = $1', [copyOrg]);
    const copyRows = Number(c);
    const eventsPerSecond = eventsStored / seconds;
    const rowsPerSecond = copyRows / copySeconds;
    const { p50, p99, max } = latency.summary();
    const per1000 = (cpu: number) => (cpu * 1e6) / eventsStored;
    const cores = (cpu: number) => (cpu / seconds).toFixed(2);
    ctx.log(
      `    ${Math.round(eventsPerSecond)} events/s vs COPY ${Math.round(rowsPerSecond)} rows/s = ${(eventsPerSecond / rowsPerSecond).toFixed(2)}x; ` +
        `CPU ms per 1,000 events: service ${per1000(serviceCpu).toFixed(1)}, Postgres ${per1000(pgCpu).toFixed(1)}, senders ${per1000(senderCpu).toFixed(1)}; ` +
        `cores: service ${cores(serviceCpu)}, Postgres ${cores(pgCpu)}, senders ${cores(senderCpu)}, other ${cores(machine.busy - serviceCpu - pgCpu - senderCpu)}, idle ${cores(machine.idle)}`,
    );
    return {
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
      copy: { rows: copyRows, seconds: copySeconds, rowsPerSecond },
      ratioToCopy: eventsPerSecond / rowsPerSecond,
    };
  } finally {
    rmSync(csv, { force: true });
    await db.drop();
  }
}
