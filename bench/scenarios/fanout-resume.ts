// Fan-out burst with resuming clients: 1,000 SSE clients of one org that resume after a cut as EventSource does, a 20,000-event burst in batches of 500; the service vs a bare node:http SSE server (3 trials).
import path from 'node:path';
import type { RunContext } from '../lib/context.js';
import { createDatabase, createOrg, serviceEnv } from '../lib/provision.js';
import { ROOT, startServer } from '../lib/service.js';
import { runStreamCase, type StreamCaseResult } from '../lib/stream-case.js';
import { runTrials } from '../lib/trials.js';
import { seqLookup } from './cross-instance.js';

const CLIENTS = 1000;
const BATCH = 500;
const BATCHES = 40; // 20,000 events
const IN_FLIGHT = 4;
const TRIALS = 3;
/** The slowest delivery the issue saw was 47 s: wait well past it for the last client before giving up. */
const DRAIN_TIMEOUT_MS = 180_000;

export interface FanoutResumeResult {
  clients: number;
  batchSize: number;
  events: number;
  service: StreamCaseResult;
  bare: StreamCaseResult;
  /** Deliveries per second of the service / of the bare server. */
  ratioToBare: number;
  /** p99 latency after the ingest response of the service / of the bare server. */
  p99RatioToBare: number;
}

export interface FanoutResumeSummary extends FanoutResumeResult {
  /** Every trial; the figures above are the median trial's (by ratio). */
  trials: {
    ratioToBare: number;
    p99RatioToBare: number;
    serviceSeconds: number;
    bareSeconds: number;
    serviceP99Ms: number;
    bareP99Ms: number;
    cuts: number;
    clientsCut: number;
    complete: number;
    inOrder: number;
  }[];
}

export async function runFanoutResume(ctx: RunContext): Promise<FanoutResumeSummary> {
  const t = await runTrials(
    TRIALS,
    (i) => {
      ctx.log(`  trial ${i + 1} of ${TRIALS}`);
      return runTrial(ctx, i);
    },
    (r) => r.ratioToBare,
  );
  return {
    ...t.median,
    trials: t.all.map((r) => {
      const sv = r.service.groups.service;
      const bg = r.bare.groups.bare;
      return {
        ratioToBare: r.ratioToBare,
        p99RatioToBare: r.p99RatioToBare,
        serviceSeconds: sv.deliverySeconds,
        bareSeconds: bg.deliverySeconds,
        serviceP99Ms: sv.latencyAfterResponseMs.p99,
        bareP99Ms: bg.latencyAfterResponseMs.p99,
        cuts: sv.resumes?.cuts ?? 0,
        clientsCut: sv.resumes?.clientsCut ?? 0,
        complete: sv.resumes?.reachedLast ?? 0,
        inOrder: sv.resumes?.inOrder ?? 0,
      };
    }),
  };
}

const publisher = { mode: 'burst' as const, batchSize: BATCH, batches: BATCHES, durationMs: 60_000, concurrency: IN_FLIGHT };

async function runTrial(ctx: RunContext, trial: number): Promise<FanoutResumeResult> {
  const db = await createDatabase();
  let service: StreamCaseResult;
  try {
    const svc = await startServer(`fanout-resume-${trial + 1}`, ctx.entry.args, serviceEnv(db, `${ctx.redisPrefix}fanout-resume:`, ctx.adminToken));
    try {
      const org = await createOrg(svc.url, ctx.adminToken, 'fan-out resume bench');
      ctx.log('    service');
      service = await runStreamCase({
        publishUrl: svc.url,
        key: org.key,
        tag: 'fr',
        groups: [{ name: 'service', url: svc.url, count: CLIENTS }],
        publisher,
        resume: true,
        drainTimeoutMs: DRAIN_TIMEOUT_MS,
        log: ctx.log,
        seqsOf: seqLookup(db, org.id, 'fr', BATCH),
      });
    } finally {
      await svc.stop();
    }
  } finally {
    await db.drop();
  }

  const bareServer = await startServer(`fanout-resume-bare-${trial + 1}`, ['--import', 'tsx', path.join(ROOT, 'bench/workloads/bare-sse-server.ts')], {});
  let bare: StreamCaseResult;
  try {
    ctx.log('    bare node:http baseline');
    bare = await runStreamCase({
      publishUrl: bareServer.url,
      key: 'none',
      tag: 'fr',
      groups: [{ name: 'bare', url: bareServer.url, count: CLIENTS }],
      publisher,
      resume: true,
      drainTimeoutMs: DRAIN_TIMEOUT_MS,
      log: ctx.log,
      async seqsOf(sent) {
        const lastSeqOf = new Map(sent.filter((s) => s.lastSeq !== null).map((s) => [s.batch, s.lastSeq!]));
        return { lastSeqOf, finalSeq: Math.max(0, ...lastSeqOf.values()) };
      },
    });
  } finally {
    await bareServer.stop();
  }
  const sv = service.groups.service;
  const bg = bare.groups.bare;
  ctx.log(
    `    service ${sv.deliverySeconds.toFixed(1)} s, p99 ${sv.latencyAfterResponseMs.p99.toFixed(0)} ms, ${sv.resumes?.cuts ?? 0} cuts (${sv.resumes?.clientsCut ?? 0} clients), ` +
      `${sv.resumes?.reachedLast ?? 0} complete, ${sv.resumes?.inOrder ?? 0} in order; bare ${bg.deliverySeconds.toFixed(1)} s, p99 ${bg.latencyAfterResponseMs.p99.toFixed(0)} ms`,
  );
  return {
    clients: CLIENTS,
    batchSize: BATCH,
    events: BATCH * BATCHES,
    service,
    bare,
    ratioToBare: sv.deliveriesPerSecond / bg.deliveriesPerSecond,
    p99RatioToBare: sv.latencyAfterResponseMs.p99 / bg.latencyAfterResponseMs.p99,
  };
}
