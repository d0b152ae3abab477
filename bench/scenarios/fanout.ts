// Fan-out scenario: 1,000 SSE clients of one org, batches of 100 posted as fast as they are taken; the service vs a bare node:http SSE server (3 trials).
import path from 'node:path';
import type { RunContext } from '../lib/context.js';
import { createDatabase, createOrg, serviceEnv } from '../lib/provision.js';
import { ROOT, startServer } from '../lib/service.js';
import { runStreamCase, type StreamCaseResult } from '../lib/stream-case.js';
import { runTrials } from '../lib/trials.js';
import { seqLookup } from './cross-instance.js';

const CLIENTS = 1000;
const BATCH = 100;
const DURATION_MS = 10_000;
const IN_FLIGHT = 4;

export interface FanoutResult {
  clients: number;
  batchSize: number;
  service: StreamCaseResult;
  bare: StreamCaseResult;
  /** Deliveries per second of the service / of the bare server. */
  ratioToBare: number;
}

export interface FanoutSummary extends FanoutResult {
  /** Every trial; the figures above are the median trial's (by ratio). */
  trials: { serviceDeliveriesPerSecond: number; bareDeliveriesPerSecond: number; ratioToBare: number }[];
}

const TRIALS = 3;

export async function runFanout(ctx: RunContext): Promise<FanoutSummary> {
  const t = await runTrials(TRIALS, (i) => {
    ctx.log(`  trial ${i + 1} of ${TRIALS}`);
    return runFanoutTrial(ctx, i);
  }, (r) => r.ratioToBare);
  return {
    ...t.median,
    trials: t.all.map((r) => ({ serviceDeliveriesPerSecond: r.service.groups.service.deliveriesPerSecond, bareDeliveriesPerSecond: r.bare.groups.bare.deliveriesPerSecond, ratioToBare: r.ratioToBare })),
  };
}

const publisher = { mode: 'max' as const, batchSize: BATCH, durationMs: DURATION_MS, concurrency: IN_FLIGHT };

async function runFanoutTrial(ctx: RunContext, trial: number): Promise<FanoutResult> {
  const db = await createDatabase();
  let service: StreamCaseResult;
  try {
    const svc = await startServer(`fanout-${trial + 1}`, ctx.entry.args, serviceEnv(db, `${ctx.redisPrefix}fanout:`, ctx.adminToken));
    try {
      const org = await createOrg(svc.url, ctx.adminToken, 'fan-out bench');
      ctx.log('    service');
      service = await runStreamCase({
        publishUrl: svc.url,
        key: org.key,
        tag: 'fan',
        groups: [{ name: 'service', url: svc.url, count: CLIENTS }],
        publisher,
        log: ctx.log,
        seqsOf: seqLookup(db, org.id, 'fan', BATCH),
      });
    } finally {
      await svc.stop();
    }
  } finally {
    await db.drop();
  }

  const bareServer = await startServer(`fanout-bare-${trial + 1}`, ['--import', 'tsx', path.join(ROOT, 'bench/workloads/bare-sse-server.ts')], {});
  let bare: StreamCaseResult;
  try {
    ctx.log('    bare node:http baseline');
    bare = await runStreamCase({
      publishUrl: bareServer.url,
      key: 'none',
      tag: 'fan',
      groups: [{ name: 'bare', url: bareServer.url, count: CLIENTS }],
      publisher,
      log: ctx.log,
      async seqsOf(sent) {
        const lastSeqOf = new Map(sent.filter((s) => s.lastSeq !== null).map((s) => [s.batch, s.lastSeq!]));
        return { lastSeqOf, finalSeq: Math.max(0, ...lastSeqOf.values()) };
      },
    });
  } finally {
    await bareServer.stop();
  }
  return { clients: CLIENTS, batchSize: BATCH, service, bare, ratioToBare: service.groups.service.deliveriesPerSecond / bare.groups.bare.deliveriesPerSecond };
}
