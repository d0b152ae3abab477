// What one request costs a server process: peak RSS (Linux /proc), the longest /healthz wait while it runs, stored bytes.
import { readFileSync, writeFileSync } from 'node:fs';
import type pg from 'pg';

/** Starts a new peak-RSS measurement for the process (Linux: writing 5 to clear_refs resets VmHWM to the current RSS). */
export function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Peak (since the last reset) and current resident memory of a process, in MiB (Linux /proc). */
export function memoryOf(pid: number): { peak: number; rss: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)![1]);
  return { peak: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
}

/**
 * Asks `baseUrl`/healthz one request after another until stop() is called; stop() resolves with the longest answer time
 * in ms (a blocked event loop answers only when it is free again, so this is the longest block seen meanwhile).
 */
export function pollHealth(baseUrl: string): { stop(): Promise<number> } {
  let running = true;
  let worst = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${baseUrl}/healthz`);
      await res.arrayBuffer();
      worst = Math.max(worst, performance.now() - started);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return worst;
    },
  };
}

/** What an organization has stored: rows, their JSON text bytes (events and shared contexts) and their size on disk. */
export async function storedBytes(sql: pg.Client, orgId: string): Promise<{ rows: number; textBytes: number; diskBytes: number; largestRow: number }> {
  const events = await sql.query<{ rows: number; text: string | null; disk: string | null; largest: number | null }>(
    'SELECT count(*)::int AS rows, sum(octet_length(e::text)) AS text, sum(pg_column_size(e.*)) AS disk, max(octet_length(e::text))::int AS largest FROM audit_events e WHERE org_id = $1',
    [orgId],
  );
  const contexts = await sql.query<{ text: string | null; disk: string | null }>(
    'SELECT sum(octet_length(c::text)) AS text, sum(pg_column_size(c.*)) AS disk FROM audit_contexts c WHERE org_id = $1',
    [orgId],
  );
  const e = events.rows[0];
  const c = contexts.rows[0];
  return {
    rows: e.rows,
    textBytes: Number(e.text ?? 0) + Number(c.text ?? 0),
    diskBytes: Number(e.disk ?? 0) + Number(c.disk ?? 0),
    largestRow: e.largest ?? 0,
  };
}
