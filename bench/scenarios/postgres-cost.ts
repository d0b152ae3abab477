// Postgres cost scenario: the ingest workload (4 senders x 500-line CloudWatch batches, 20 s) into a Postgres cluster of
// the scenario's own (initdb, default settings, spare port), so that all it spends is the service's: CPU of every
// Postgres process (backends, WAL writer, checkpointer, autovacuum; a CHECKPOINT at the end included), WAL bytes and
// database growth per event stored. Inputs of the capacity model in docs/scaling.md.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { cpuSeconds } from '../lib/cpu.js';
import type { RunContext } from '../lib/context.js';
import { createOrg, REDIS_URL } from '../lib/provision.js';
import { freePort, startServer } from '../lib/service.js';
import { startWorker } from '../lib/workers.js';
import type { SendLoopDone } from '../lib/send-loop.js';

const SENDERS = 4;
const BATCH = 500;
const DURATION_MS = 20_000;
const TICKS_PER_SECOND = 100;

export interface PostgresCostResult {
  seconds: number;
  eventsStored: number;
  eventsPerSecond: number;
  /** CPU per 1,000 events stored: every process of the Postgres cluster, and the service. */
  postgresCpuMsPer1000: number;
  serviceCpuMsPer1000: number;
  /** WAL written per event (pg_current_wal_lsn before and after). */
  walBytesPerEvent: number;
  /** Growth of the database per event (heap, indexes, TOAST, the rest) over this short run from empty. */
  databaseBytesPerEvent: number;
  postgresVersion: string;
}

const bin = (name: string) => {
  const dir = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' }).stdout.trim() || '/usr/lib/postgresql/15/bin';
  return path.join(dir, name);
};

/** Runs a Postgres program as the postgres user when we are root (initdb refuses root). */
function asPostgres(program: string, args: string[]): void {
  const r = process.getuid?.() === 0 ? spawnSync('runuser', ['-u', 'postgres', '--', bin(program), ...args], { encoding: 'utf8' }) : spawnSync(bin(program), args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${program} failed (${r.status}): ${(r.stdout + r.stderr).slice(-1000)}`);
}

/** User + system CPU seconds of a process and of its children that it has waited for (exited backends, autovacuum workers). */
function cpuWithReapedChildren(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS_PER_SECOND;
}

/** CPU of a Postgres cluster: the postmaster with its reaped children, plus every live child. */
function clusterCpu(postmaster: number): number {
  let total = cpuWithReapedChildren(postmaster);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) total += cpuSeconds(Number(entry)) || 0;
    } catch {
      /* the process ended meanwhile: its CPU is now in the postmaster's reaped children */
    }
  }
  return total;
}

export async function runPostgresCost(ctx: RunContext): Promise<PostgresCostResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'audit-stream-pg-'));
  chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const port = await freePort();
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  asPostgres('pg_ctl', ['-D', data, '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, '-l', path.join(dir, 'log'), '-w', 'start']);
  try {
    const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const q = async <R extends pg.QueryResultRow>(url: string, sql: string) => {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return (await c.query<R>(sql)).rows;
      } finally {
        await c.end();
      }
    };
    await q(admin, 'CREATE DATABASE bench');
    const url = `postgres://postgres@127.0.0.1:${port}/bench`;
    const postmaster = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const [{ server_version: version }] = await q<{ server_version: string }>(url, 'SHOW server_version');
    const env = { DATABASE_URL: url, REDIS_URL, REDIS_PREFIX: `${ctx.redisPrefix}pgcost:`, ADMIN_TOKEN: ctx.adminToken, ANOMALY_MIN_RATE: '1000000000' };
    const svc = await startServer('postgres-cost', ctx.entry.args, env);
    try {
      const org = await createOrg(svc.url, ctx.adminToken, 'postgres cost bench');
      const workers = Array.from({ length: SENDERS }, (_, i) => startWorker('workloads/ingest-sender.ts', { url: svc.url, key: org.key, seed: 7000 + i, batchSize: BATCH, durationMs: DURATION_MS }));
      try {
        await Promise.all(workers.map((w) => w.next('ready')));
        ctx.log(`    ${SENDERS} senders x ${BATCH}-line CloudWatch batches for ${DURATION_MS / 1000} s into a private Postgres ${version.split(' ')[0]}`);
        const snapshot = async () => {
          const [s] = await q<{ lsn: string; size: string }>(url, "SELECT pg_current_wal_lsn() - '0/0' AS lsn, pg_database_size('bench') AS size");
          return { lsn: Number(s.lsn), size: Number(s.size), pgCpu: clusterCpu(postmaster), svcCpu: cpuSeconds(svc.pid) };
        };
        const before = await snapshot();
        for (const w of workers) w.send({ type: 'go' });
        const done = await Promise.all(workers.map((w) => w.next<SendLoopDone>('done', DURATION_MS + 60_000)));
        // The checkpoint the run's WAL calls for is part of its cost.
        await q(url, 'CHECKPOINT');
        const after = await snapshot();
        const [{ n }] = await q<{ n: string }>(url, `SELECT count(*) AS n FROM audit_events WHERE org_id = '${org.id}'`);
        const events = Number(n);
        const seconds = (Math.max(...done.map((d) => d.ended)) - Math.min(...done.map((d) => d.started))) / 1000;
        const result: PostgresCostResult = {
          seconds,
          eventsStored: events,
          eventsPerSecond: events / seconds,
          postgresCpuMsPer1000: ((after.pgCpu - before.pgCpu) * 1e6) / events,
          serviceCpuMsPer1000: ((after.svcCpu - before.svcCpu) * 1e6) / events,
          walBytesPerEvent: (after.lsn - before.lsn) / events,
          databaseBytesPerEvent: (after.size - before.size) / events,
          postgresVersion: version.split(' ')[0],
        };
        ctx.log(
          `    ${events} events in ${seconds.toFixed(1)} s (${Math.round(result.eventsPerSecond)}/s); per 1,000 events: Postgres CPU ${result.postgresCpuMsPer1000.toFixed(1)} ms (every process), ` +
            `service ${result.serviceCpuMsPer1000.toFixed(1)} ms; WAL ${Math.round(result.walBytesPerEvent)} B per event; database growth ${Math.round(result.databaseBytesPerEvent)} B per event`,
        );
        return result;
      } finally {
        await Promise.all(workers.map((w) => w.stop()));
      }
    } finally {
      await svc.stop();
    }
  } finally {
    asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    rmSync(dir, { recursive: true, force: true });
  }
}
