// MCP proxy scenario: a trivial tool called directly, through a bare node:http forwarder (the cost of any HTTP hop on
// this machine) and through the proxy in the same run (alternating phases): the latency each adds (one call at a time),
// calls per second (16 in flight) and CPU per call of every process (caller, upstream, hop, Postgres); then the time
// from a suspension through instance A to the first refused call through instance B.
import type { RunContext } from '../lib/context.js';
import { Histogram, type HistogramData } from '../lib/histogram.js';
import { cpuSeconds, machineCpuSeconds } from '../lib/cpu.js';
import { loadAverage } from '../lib/machine.js';
import { startPgCpuMeter } from '../lib/pg-cpu.js';
import pg from 'pg';
import { createDatabase, createOrg, REDIS_URL, serviceEnv, type BenchDatabase } from '../lib/provision.js';
import { nodeCounters } from '../lib/redis-stats.js';
import { startServer } from '../lib/service.js';
import { startWorker, type Worker } from '../lib/workers.js';

const LATENCY_PHASE_MS = 4000;
const THROUGHPUT_PHASE_MS = 5000;
const THROUGHPUT_CONCURRENCY = 16;
const ROUNDS = 2;
const SUSPENSIONS = 10;

/** The floor of the added latency: one durable commit of a one-row INSERT (the call's intent is one), p50 and p99. */
async function commitLatency(db: BenchDatabase, n = 200): Promise<{ p50: number; p99: number }> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    await c.query('CREATE TABLE IF NOT EXISTS bench_commit_probe (a int)');
    const h = new Histogram();
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await c.query('INSERT INTO bench_commit_probe VALUES (1)');
      h.record(performance.now() - t0);
    }
    await c.query('DROP TABLE bench_commit_probe');
    return { p50: h.quantile(0.5), p99: h.quantile(0.99) };
  } finally {
    await c.end();
  }
}

/** CPU ms per call (user + system, from /proc) of each process in one path's 16-in-flight phases, and the machine's. */
export interface PathCpu {
  caller: number;
  upstream: number;
  /** The forwarder (bare path) or the service (proxy path); 0 direct. */
  hop: number;
  postgres: number;
  /** The Redis server (shared with whatever else uses it on this machine; the service publishes each record and counts rates). */
  redis: number;
  /** Every process on the machine (both cores, whatever else runs), busy ms per call. */
  machine: number;
  /** Share of the machine's CPU time that was idle during the phases (0..1). */
  idleShare: number;
}

export interface ProxyBenchResult {
  /** One durable commit of a one-row INSERT on the same database, measured between the phases. */
  commit: { p50: number; p99: number };
  latency: { directP50: number; directP99: number; proxyP50: number; proxyP99: number; addedP50: number; addedP99: number; calls: { direct: number; proxy: number }; forwardP50?: number; forwardP99?: number };
  throughput: { concurrency: number; directPerSecond: number; proxyPerSecond: number; ratio: number; errors: number; forwardPerSecond?: number; forwardRatio?: number };
  /** CPU ms per call (user + system, from /proc) in the throughput phases: the service's per proxied call, the upstream's per call. */
  cpu: {
    serviceMsPerProxiedCall: number;
    upstreamMsPerCall: number;
    byPath?: { direct: PathCpu; forward: PathCpu; proxy: PathCpu };
    /**
     * The ratio to direct each path would reach if CPU alone limited calls/s (the machine's cores all busy): direct's
     * CPU per call (caller, upstream, Postgres, Redis) over the path's (the same plus its hop).
     */
    cpuBoundRatio?: { forward: number; proxy: number };
  };
  /** The load average (1 min) at the start and end of the measured phases. */
  loadAverage?: { start: number; end: number };
  suspension: { samples: number; afterRequestP50: number; afterRequestMax: number; afterResponseP50: number; afterResponseMax: number };
}

interface Done {
  type: 'done';
  histogram: HistogramData;
  calls: number;
  errors: number;
  seconds: number;
  [key: string]: unknown;
}

async function phase(w: Worker, url: string, key: string, concurrency: number, durationMs: number): Promise<Done> {
  w.send({ type: 'run', target: { url, key }, concurrency, durationMs });
  return w.next<Done>('done', durationMs + 60_000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const round2 = (x: number) => Math.round(x * 100) / 100;

type PathName = 'direct' | 'forward' | 'proxy';
const PATHS: PathName[] = ['direct', 'forward', 'proxy'];

export async function runProxy(ctx: RunContext): Promise<ProxyBenchResult> {
  const db = await createDatabase();
  const upstream = startWorker('workloads/mcp-upstream.ts', {});
  const caller = startWorker('workloads/mcp-caller.ts', {});
  let forwarder: Worker | null = null;
  try {
    const { url: upstreamUrl } = await upstream.next<{ type: 'ready'; url: string }>('ready');
    forwarder = startWorker('workloads/bare-forwarder.ts', { upstreamUrl });
    const { url: forwardUrl } = await forwarder.next<{ type: 'ready'; url: string }>('ready');
    await caller.next('ready');
    const env = serviceEnv(db, `${ctx.redisPrefix}proxy:`, ctx.adminToken, {
      PROXY_ALLOW_PRIVATE_UPSTREAMS: 'true',
      PROXY_MAX_CALLS_PER_KEY: '1000',
      PROXY_MAX_CALLS_PER_SESSION: '1000',
      PROXY_MAX_REQUESTS_PER_KEY: '1000',
      LOG_LEVEL: 'warn',
    });
    const a = await startServer('proxy-a', ctx.entry.args, env);
    try {
      const org = await createOrg(a.url, ctx.adminToken, 'proxy bench', ['events:read', 'sessions:write', 'mcp:call', 'mcp:admin']);
      const put = await fetch(`${a.url}/api/v1/mcp/servers/bench`, { method: 'PUT', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: upstreamUrl }) });
      if (put.status >= 300) throw new Error(`registering the upstream: ${put.status} ${await put.text()}`);
      const proxyUrl = `${a.url}/mcp/bench`;
      const urls: Record<PathName, string> = { direct: upstreamUrl, forward: forwardUrl, proxy: proxyUrl };
      const hopPid: Record<PathName, number | null> = { direct: null, forward: forwarder.child.pid!, proxy: a.pid };
      // Warm every path (connections, JIT, the organization's configuration).
      for (const p of PATHS) await phase(caller, urls[p], org.key, 4, 1000);

      const load = { start: loadAverage(), end: 0 };
      const commits: { p50: number; p99: number }[] = [];
      const lat = { direct: new Histogram(), forward: new Histogram(), proxy: new Histogram() };
      const tput = { direct: [] as number[], forward: [] as number[], proxy: [] as number[] };
      const zero = () => ({ calls: 0, caller: 0, upstream: 0, hop: 0, postgres: 0, redis: 0, busy: 0, idle: 0 });
      const redisPort = Number(new URL(REDIS_URL).port || 6379);
      const redisCpu = () => nodeCounters(redisPort).then((c) => c.cpu).catch(() => NaN);
      const cpu: Record<PathName, ReturnType<typeof zero>> = { direct: zero(), forward: zero(), proxy: zero() };
      let errors = 0;
      for (let round = 0; round < ROUNDS; round++) {
        ctx.log(`  round ${round + 1} of ${ROUNDS}: one call at a time, then ${THROUGHPUT_CONCURRENCY} in flight`);
        for (const name of PATHS) {
          const d = await phase(caller, urls[name], org.key, 1, LATENCY_PHASE_MS);
          lat[name].merge(d.histogram);
          errors += d.errors;
        }
        commits.push(await commitLatency(db));
        for (const name of PATHS) {
          const pid = hopPid[name];
          const pg = await startPgCpuMeter(db);
          const redisBefore = await redisCpu();
          const before = { caller: cpuSeconds(caller.child.pid!), upstream: cpuSeconds(upstream.child.pid!), hop: pid ? cpuSeconds(pid) : 0, machine: machineCpuSeconds() };
          const d = await phase(caller, urls[name], org.key, THROUGHPUT_CONCURRENCY, THROUGHPUT_PHASE_MS);
          const after = { caller: cpuSeconds(caller.child.pid!), upstream: cpuSeconds(upstream.child.pid!), hop: pid ? cpuSeconds(pid) : 0, machine: machineCpuSeconds() };
          const c = cpu[name];
          c.redis += (await redisCpu()) - redisBefore;
          c.postgres += await pg.stop();
          c.calls += d.calls;
          c.caller += after.caller - before.caller;
          c.upstream += after.upstream - before.upstream;
          c.hop += after.hop - before.hop;
          c.busy += after.machine.busy - before.machine.busy;
          c.idle += after.machine.idle - before.machine.idle;
          tput[name].push(d.calls / d.seconds);
          errors += d.errors;
        }
      }
      load.end = loadAverage();
      const perCall = (c: ReturnType<typeof zero>): PathCpu => ({
        caller: round2((c.caller * 1000) / c.calls),
        upstream: round2((c.upstream * 1000) / c.calls),
        hop: round2((c.hop * 1000) / c.calls),
        postgres: round2((c.postgres * 1000) / c.calls),
        redis: round2((c.redis * 1000) / c.calls),
        machine: round2((c.busy * 1000) / c.calls),
        idleShare: round2(c.idle / (c.busy + c.idle)),
      });
      const byPath = { direct: perCall(cpu.direct), forward: perCall(cpu.forward), proxy: perCall(cpu.proxy) };
      const cpuSum = (c: PathCpu) => c.caller + c.upstream + c.hop + c.postgres + (Number.isNaN(c.redis) ? 0 : c.redis);
      const cpuBoundRatio = { forward: round2(cpuSum(byPath.direct) / cpuSum(byPath.forward)), proxy: round2(cpuSum(byPath.direct) / cpuSum(byPath.proxy)) };
      const directPerSecond = median(tput.direct);
      const forwardPerSecond = median(tput.forward);
      const proxyPerSecond = median(tput.proxy);
      const d = lat.direct.summary();
      const f = lat.forward.summary();
      const p = lat.proxy.summary();
      const commit = { p50: median(commits.map((c) => c.p50)), p99: median(commits.map((c) => c.p99)) };
      ctx.log(`  latency p50 direct ${d.p50} ms, bare forwarder ${f.p50} ms, proxied ${p.p50} ms (a bare commit: ${commit.p50} ms)`);
      ctx.log(`  calls/s at ${THROUGHPUT_CONCURRENCY} in flight: direct ${directPerSecond.toFixed(0)}, bare forwarder ${forwardPerSecond.toFixed(0)} (${(forwardPerSecond / directPerSecond).toFixed(2)}x), proxied ${proxyPerSecond.toFixed(0)} (${(proxyPerSecond / directPerSecond).toFixed(2)}x); load ${load.start.toFixed(2)} -> ${load.end.toFixed(2)}`);
      ctx.log(`  if CPU alone limited calls/s (CPU per call of caller, upstream, hop, Postgres, Redis summed): bare forwarder ${cpuBoundRatio.forward}x, proxy ${cpuBoundRatio.proxy}x of direct`);
      for (const name of PATHS) {
        const c = byPath[name];
        ctx.log(`  CPU ms per call, ${name}: caller ${c.caller}, upstream ${c.upstream}, ${name === 'proxy' ? 'service' : name === 'forward' ? 'forwarder' : 'hop'} ${c.hop}, Postgres ${c.postgres}, Redis ${c.redis}; machine ${c.machine} (idle ${Math.round(c.idleShare * 100)}%)`);
      }

      const b = await startServer('proxy-b', ctx.entry.args, { ...env, MIGRATE_ON_START: 'false' });
      const suspender = startWorker('workloads/mcp-suspender.ts', {});
      const afterRequest: number[] = [];
      const afterResponse: number[] = [];
      try {
        await suspender.next('ready');
        for (let i = 0; i < SUSPENSIONS; i++) {
          const sessionId = `suspend-${i}`;
          suspender.send({ type: 'watch', url: `${b.url}/mcp/bench`, key: org.key, sessionId });
          await suspender.next('calling');
          // The first call's record (which creates the session) is stored just after its answer: wait for the session.
          for (let t = 0; t < 200; t++) {
            const got = await fetch(`${a.url}/api/v1/sessions/${sessionId}`, { headers: { authorization: `Bearer ${org.key}` } });
            await got.text();
            if (got.status === 200) break;
            await new Promise((r) => setTimeout(r, 25));
          }
          const sent = Date.now();
          const r = await fetch(`${a.url}/api/v1/sessions/${sessionId}/suspend`, { method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' }, body: '{}' });
          const answered = Date.now();
          if (r.status !== 200) throw new Error(`suspend: ${r.status} ${await r.text()}`);
          const refused = await suspender.next<{ type: 'refused'; sentAt: number; answeredAt: number }>('refused', 30_000);
          afterRequest.push(refused.answeredAt - sent);
          afterResponse.push(refused.answeredAt - answered);
        }
      } finally {
        await suspender.stop();
        await b.stop();
      }
      return {
        commit,
        latency: { directP50: d.p50, directP99: d.p99, proxyP50: p.p50, proxyP99: p.p99, addedP50: round2(p.p50 - d.p50), addedP99: round2(p.p99 - d.p99), calls: { direct: d.count, proxy: p.count }, forwardP50: f.p50, forwardP99: f.p99 },
        cpu: { serviceMsPerProxiedCall: byPath.proxy.hop, upstreamMsPerCall: byPath.direct.upstream, byPath, cpuBoundRatio },
        throughput: { concurrency: THROUGHPUT_CONCURRENCY, directPerSecond: Math.round(directPerSecond), proxyPerSecond: Math.round(proxyPerSecond), ratio: round2(proxyPerSecond / directPerSecond), errors, forwardPerSecond: Math.round(forwardPerSecond), forwardRatio: round2(forwardPerSecond / directPerSecond) },
        loadAverage: load,
        suspension: { samples: afterRequest.length, afterRequestP50: median(afterRequest), afterRequestMax: Math.max(...afterRequest), afterResponseP50: median(afterResponse), afterResponseMax: Math.max(...afterResponse) },
      };
    } finally {
      await a.stop();
    }
  } finally {
    await caller.stop();
    await forwarder?.stop();
    await upstream.stop();
    await db.drop();
  }
}
