// All of Postgres's CPU while something runs: the backends of one database (autovacuum workers on it included) and the
// cluster's own background processes (background writer, checkpointer, WAL writer), sampled so short-lived ones count.
import { cpuSeconds } from './cpu.js';
import type { BenchDatabase } from './provision.js';

const AUX = ['background writer', 'checkpointer', 'walwriter', 'autovacuum launcher'];

export interface PgCpuMeter {
  /** CPU seconds Postgres used since start (processes that started meanwhile count from their start). */
  stop(): Promise<number>;
}

export async function startPgCpuMeter(db: BenchDatabase, intervalMs = 200): Promise<PgCpuMeter> {
  const pids = async () =>
    (await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE (datname = $1 OR backend_type = ANY($2::text[])) AND pid <> pg_backend_pid()`, [db.name, AUX])).map((r) => r.pid);
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  for (const pid of await pids()) {
    const c = cpuSeconds(pid);
    first.set(pid, c);
    last.set(pid, c);
  }
  const sample = async () => {
    for (const pid of await pids().catch(() => [])) {
      const c = cpuSeconds(pid);
      if (!Number.isNaN(c)) {
        if (!first.has(pid)) first.set(pid, 0);
        last.set(pid, c);
      }
    }
  };
  let running = true;
  const loop = (async () => {
    while (running) {
      await new Promise((r) => setTimeout(r, intervalMs));
      await sample();
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await sample();
      let total = 0;
      for (const [pid, end] of last) total += end - (first.get(pid) ?? 0);
      return total;
    },
  };
}
