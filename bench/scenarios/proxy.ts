// MCP proxy scenario: a trivial tool called directly and through the proxy in the same run (alternating phases), the
// latency the proxy adds (one call at a time) and calls per second (16 in flight); then the time from a suspension
// through instance A to the first refused call through instance B.
import type { RunContext } from '../lib/context.js';
import { Histogram, type HistogramData } from '../lib/histogram.js';
import { cpuSeconds } from '../lib/cpu.js';
import pg from 'pg';
import { createDatabase, createOrg, serviceEnv, type BenchDatabase } from '../lib/provision.js';
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

export interface ProxyBenchResult {
  /** One durable commit of a one-row INSERT on the same database, measured between the phases. */
  commit: { p50: number; p99: number };
  latency: { directP50: number; directP99: number; proxyP50: number; proxyP99: number; addedP50: number; addedP99: number; calls: { direct: number; proxy: number } };
  throughput: { concurrency: number; directPerSecond: number; proxyPerSecond: number; ratio: number; errors: number };
  /** CPU ms per call (user + system, from /proc) in the throughput phases: the service's per proxied call, the upstream's per call. */
  cpu: { serviceMsPerProxiedCall: number; upstreamMsPerCall: number };
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

export async function runProxy(ctx: RunContext): Promise<ProxyBenchResult> {
  const db = await createDatabase();
  const upstream = startWorker('workloads/mcp-upstream.ts', {});
  const caller = startWorker('workloads/mcp-caller.ts', {});
  try {
    const { url: upstreamUrl } = await upstream.next<{ type: 'ready'; url: string }>('ready');
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
      // Warm both paths (connections, JIT, the organization's configuration).
      await phase(caller, upstreamUrl, org.key, 4, 1000);
      await phase(caller, proxyUrl, org.key, 4, 1000);

      const commits: { p50: number; p99: number }[] = [];
      const lat = { direct: new Histogram(), proxy: new Histogram() };
      const tput = { direct: [] as number[], proxy: [] as number[] };
      const cpu = { service: 0, proxiedCalls: 0, upstream: 0, directCalls: 0 };
      let errors = 0;
      for (let round = 0; round < ROUNDS; round++) {
        ctx.log(`  round ${round + 1} of ${ROUNDS}: one call at a time, then ${THROUGHPUT_CONCURRENCY} in flight`);
        for (const [name, url] of [['direct', upstreamUrl], ['proxy', proxyUrl]] as const) {
          const d = await phase(caller, url, org.key, 1, LATENCY_PHASE_MS);
          lat[name].merge(d.histogram);
          errors += d.errors;
        }
        commits.push(await commitLatency(db));
        for (const [name, url] of [['direct', upstreamUrl], ['proxy', proxyUrl]] as const) {
          const before = { service: cpuSeconds(a.pid), upstream: cpuSeconds(upstream.child.pid!) };
          const d = await phase(caller, url, org.key, THROUGHPUT_CONCURRENCY, THROUGHPUT_PHASE_MS);
          tput[name].push(d.calls / d.seconds);
          errors += d.errors;
          if (name === 'proxy') {
            cpu.service += cpuSeconds(a.pid) - before.service;
            cpu.proxiedCalls += d.calls;
          } else {
            cpu.upstream += cpuSeconds(upstream.child.pid!) - before.upstream;
            cpu.directCalls += d.calls;
          }
        }
      }
      const directPerSecond = median(tput.direct);
      const proxyPerSecond = median(tput.proxy);
      const d = lat.direct.summary();
      const p = lat.proxy.summary();
      const commit = { p50: median(commits.map((c) => c.p50)), p99: median(commits.map((c) => c.p99)) };
      ctx.log(`  latency p50 direct ${d.p50} ms, proxied ${p.p50} ms (a bare commit: ${commit.p50} ms); calls/s direct ${directPerSecond.toFixed(0)}, proxied ${proxyPerSecond.toFixed(0)}`);

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
        latency: { directP50: d.p50, directP99: d.p99, proxyP50: p.p50, proxyP99: p.p99, addedP50: round2(p.p50 - d.p50), addedP99: round2(p.p99 - d.p99), calls: { direct: d.count, proxy: p.count } },
        cpu: { serviceMsPerProxiedCall: round2((cpu.service * 1000) / cpu.proxiedCalls), upstreamMsPerCall: round2((cpu.upstream * 1000) / cpu.directCalls) },
        throughput: { concurrency: THROUGHPUT_CONCURRENCY, directPerSecond: Math.round(directPerSecond), proxyPerSecond: Math.round(proxyPerSecond), ratio: round2(proxyPerSecond / directPerSecond), errors },
        suspension: { samples: afterRequest.length, afterRequestP50: median(afterRequest), afterRequestMax: Math.max(...afterRequest), afterResponseP50: median(afterResponse), afterResponseMax: Math.max(...afterResponse) },
      };
    } finally {
      await a.stop();
    }
  } finally {
    await caller.stop();
    await upstream.stop();
    await db.drop();
  }
}
