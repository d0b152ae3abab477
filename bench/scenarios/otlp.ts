// OTLP scenario: the same tool calls sent as OTLP protobuf trace exports and as raw JSON arrays, in turn, to one service; spans (events) stored per second of each.
import type { RunContext } from '../lib/context.js';
import { Histogram } from '../lib/histogram.js';
import { createDatabase, createOrg, serviceEnv } from '../lib/provision.js';
import { startServer } from '../lib/service.js';
import { startWorker } from '../lib/workers.js';
import type { SendLoopDone } from '../lib/send-loop.js';

const SENDERS = 2;
const BATCH = 500;
const DURATION_MS = 15_000;

export interface OtlpPhase {
  mode: 'otlp' | 'raw';
  seconds: number;
  requests: number;
  statuses: Record<string, number>;
  eventsStored: number;
  eventsPerSecond: number;
  bytesPerEvent: number;
  requestLatencyMs: { p50: number; p99: number; max: number };
}

export interface OtlpResult {
  senders: number;
  batchSize: number;
  otlp: OtlpPhase;
  raw: OtlpPhase;
  /** OTLP spans stored per second over raw events stored per second. */
  ratioToRaw: number;
}

type SenderDone = SendLoopDone & { bodyBytes: number };

export async function runOtlp(ctx: RunContext): Promise<OtlpResult> {
  const db = await createDatabase();
  try {
    const svc = await startServer('otlp', ctx.entry.args, serviceEnv(db, `${ctx.redisPrefix}otlp:`, ctx.adminToken));
    try {
      const phase = async (mode: 'otlp' | 'raw'): Promise<OtlpPhase> => {
        const org = await createOrg(svc.url, ctx.adminToken, `otlp bench ${mode}`);
        const workers = Array.from({ length: SENDERS }, (_, i) => startWorker('workloads/otlp-sender.ts', { url: svc.url, key: org.key, tag: `${mode}${i}`, batchSize: BATCH, durationMs: DURATION_MS, mode }));
        let done: SenderDone[];
        try {
          await Promise.all(workers.map((w) => w.next('ready')));
          ctx.log(`    ${mode}: ${SENDERS} senders x ${BATCH} tool calls per ${mode === 'otlp' ? 'protobuf export' : 'JSON array'} for ${DURATION_MS / 1000} s`);
          for (const w of workers) w.send({ type: 'go' });
          done = await Promise.all(workers.map((w) => w.next<SenderDone>('done', DURATION_MS + 60_000)));
        } finally {
          await Promise.all(workers.map((w) => w.stop()));
        }
        const seconds = (Math.max(...done.map((d) => d.ended)) - Math.min(...done.map((d) => d.started))) / 1000;
        const latency = new Histogram();
        const statuses: Record<string, number> = {};
        for (const d of done) {
          latency.merge(d.latency);
          for (const [s, n] of Object.entries(d.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
        }
        const [{ n }] = await db.query<{ n: string }>(`SELECT count(*) AS n FROM audit_events WHERE org_id = $1 AND type = 'tool_call'`, [org.id]);
        const eventsStored = Number(n);
        const { p50, p99, max } = latency.summary();
        ctx.log(`    ${mode}: ${eventsStored} stored in ${seconds.toFixed(1)} s`);
        return {
          mode,
          seconds,
          requests: done.reduce((a, d) => a + d.requests, 0),
          statuses,
          eventsStored,
          eventsPerSecond: eventsStored / seconds,
          bytesPerEvent: done.reduce((a, d) => a + d.bodyBytes, 0) / Math.max(1, done.reduce((a, d) => a + d.requests, 0) * BATCH),
          requestLatencyMs: { p50, p99, max },
        };
      };
      const raw = await phase('raw');
      const otlp = await phase('otlp');
      return { senders: SENDERS, batchSize: BATCH, otlp, raw, ratioToRaw: otlp.eventsPerSecond / raw.eventsPerSecond };
    } finally {
      await svc.stop();
    }
  } finally {
    await db.drop();
  }
}
