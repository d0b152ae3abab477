// Cross-instance scenario: two instances sharing Postgres and Redis, 200 clients on each, 500 events/s posted to one (3 trials).
import type { RunContext } from '../lib/context.js';
import { createDatabase, createOrg, serviceEnv, type BenchDatabase } from '../lib/provision.js';
import { startServer } from '../lib/service.js';
import { runStreamCase, type LatencySummary, type StreamCaseResult } from '../lib/stream-case.js';
import { runTrials } from '../lib/trials.js';
import { lastIdPattern } from '../workloads/tool-calls.js';

const CLIENTS_PER_INSTANCE = 200;
const RATE = 500;
const BATCH = 10;
const DURATION_MS = 10_000;

export interface CrossInstanceResult {
  clientsPerInstance: number;
  eventsPerSecond: number;
  batchSize: number;
  /** The median trial (by p99 on the other instance). */
  run: StreamCaseResult;
  /** Latency on the other instance after the ingest response, every trial. */
  trials: LatencySummary[];
}

const TRIALS = 3;

export function seqLookup(db: BenchDatabase, orgId: string, tag: string, batch: number) {
  return async () => {
    const rows = await db.query<{ id: string; seq: string }>("SELECT metadata->>'id' AS id, seq FROM audit_events WHERE org_id = $1 AND metadata->>'id' LIKE $2", [orgId, lastIdPattern(tag, batch)]);
    const [{ event_seq }] = await db.query<{ event_seq: string }>('SELECT event_seq FROM organizations WHERE id = $1', [orgId]);
    return { lastSeqOf: new Map(rows.map((r) => [Number(r.id.split('-')[1]), Number(r.seq)])), finalSeq: Number(event_seq) };
  };
}

export async function runCrossInstance(ctx: RunContext): Promise<CrossInstanceResult> {
  const db = await createDatabase();
  try {
    const env = serviceEnv(db, `${ctx.redisPrefix}cross:`, ctx.adminToken);
    const a = await startServer('cross-a', ctx.entry.args, env);
    try {
      const b = await startServer('cross-b', ctx.entry.args, { ...env, MIGRATE_ON_START: 'false' });
      try {
        const t = await runTrials(TRIALS, async (i) => {
          ctx.log(`  trial ${i + 1} of ${TRIALS}`);
          const org = await createOrg(a.url, ctx.adminToken, `cross-instance bench ${i + 1}`);
          return runStreamCase({
            publishUrl: a.url,
            key: org.key,
            tag: 'xi',
            groups: [
              { name: 'other', url: b.url, count: CLIENTS_PER_INSTANCE },
              { name: 'same', url: a.url, count: CLIENTS_PER_INSTANCE },
            ],
            publisher: { mode: 'paced', rate: RATE, batchSize: BATCH, durationMs: DURATION_MS, concurrency: 1 },
            log: ctx.log,
            seqsOf: seqLookup(db, org.id, 'xi', BATCH),
          });
        }, (r) => r.groups.other.latencyAfterResponseMs.p99);
        return { clientsPerInstance: CLIENTS_PER_INSTANCE, eventsPerSecond: RATE, batchSize: BATCH, run: t.median, trials: t.all.map((r) => r.groups.other.latencyAfterResponseMs) };
      } finally {
        await b.stop();
      }
    } finally {
      await a.stop();
    }
  } finally {
    await db.drop();
  }
}
