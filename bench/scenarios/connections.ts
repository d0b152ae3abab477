// Connections scenario: 10,000 idle SSE streams; resident memory per connection of the service vs the bare node:http server.
import path from 'node:path';
import { sleep } from '../lib/clock.js';
import type { RunContext } from '../lib/context.js';
import { createDatabase, createOrg, serviceEnv } from '../lib/provision.js';
import { fdLimit, ROOT, startServer, type RunningServer } from '../lib/service.js';
import { startWorker, type WorkerMessage } from '../lib/workers.js';

const CONNECTIONS = 10_000;
const PROCESSES = 4;

export interface MemorySide {
  connections: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  kbPerConnection: number;
}

export interface ConnectionsResult {
  target: number;
  fdLimit: number;
  service: MemorySide;
  bare: MemorySide;
  /** KB per connection of the service / of the bare server. */
  ratioToBare: number;
}

/** The median of a few VmRSS samples, so one transient allocation does not decide the figure. */
async function settledRssKb(server: RunningServer): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    await sleep(400);
    samples.push(server.rssKb());
  }
  return samples.sort((a, b) => a - b)[2];
}

async function measure(server: RunningServer, key: string, connections: number, log: (l: string) => void): Promise<MemorySide> {
  // Warm the stream path first (module code, JIT, the org feed) so the baseline is a running server, not a cold one.
  const warm = startWorker('workloads/sse-clients.ts', { url: server.url, key, count: 20, idle: true });
  await warm.next('ready');
  await warm.stop();
  await sleep(500);
  const before = await settledRssKb(server);
  const per = Math.ceil(connections / PROCESSES);
  const workers = Array.from({ length: PROCESSES }, (_, i) =>
    // Each process its own source address: its own ephemeral port range towards the server.
    startWorker('workloads/sse-clients.ts', { url: server.url, key, count: per, idle: true, localAddresses: [`127.0.0.${i + 2}`], openConcurrency: 200 }),
  );
  try {
    const ready = await Promise.all(workers.map((w) => w.next<WorkerMessage & { open: number; statuses: Record<string, number> }>('ready', 180_000)));
    const open = ready.reduce((a, r) => a + r.open, 0);
    log(`    ${open} idle streams open on ${server.name} (statuses ${JSON.stringify(ready.reduce((acc, r) => ({ ...acc, ...Object.fromEntries(Object.entries(r.statuses).map(([k, v]) => [k, (acc[k] ?? 0) + v])) }), {} as Record<string, number>))})`);
    await sleep(2000);
    const after = await settledRssKb(server);
    return { connections: open, rssBeforeMb: before / 1024, rssAfterMb: after / 1024, kbPerConnection: (after - before) / open };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

export async function runConnections(ctx: RunContext): Promise<ConnectionsResult> {
  const limit = fdLimit();
  // Every connection is one descriptor in the server; keep a margin for its database, Redis and log files.
  const connections = Math.min(CONNECTIONS, limit - 200);
  let service: MemorySide;
  const db = await createDatabase();
  try {
    const svc = await startServer('connections', ctx.entry.args, serviceEnv(db, `${ctx.redisPrefix}conn:`, ctx.adminToken));
    try {
      const org = await createOrg(svc.url, ctx.adminToken, 'connections bench');
      ctx.log(`  connections: service, ${connections} idle streams (fd limit ${limit})`);
      service = await measure(svc, org.key, connections, ctx.log);
    } finally {
      await svc.stop();
    }
  } finally {
    await db.drop();
  }
  const bareServer = await startServer('connections-bare', ['--import', 'tsx', path.join(ROOT, 'bench/workloads/bare-sse-server.ts')], {});
  let bare: MemorySide;
  try {
    ctx.log('  connections: bare node:http baseline');
    bare = await measure(bareServer, 'none', connections, ctx.log);
  } finally {
    await bareServer.stop();
  }
  return { target: CONNECTIONS, fdLimit: limit, service, bare, ratioToBare: service.kbPerConnection / bare.kbPerConnection };
}
