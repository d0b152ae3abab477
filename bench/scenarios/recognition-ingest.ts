// Recognition end to end: agent log events (OTLP/JSON) stored per second by a service reading them with the built-in
// profiles and an organization's 20 profiles, against one with the built-in profiles off and no organization profiles
// (the generic reading alone), in alternating phases of one run on one database.
import type { RunContext } from '../lib/context.js';
import { createDatabase, createOrg, serviceEnv, type BenchDatabase } from '../lib/provision.js';
import { startServer } from '../lib/service.js';
import type { SendLoopDone } from '../lib/send-loop.js';
import { startWorker } from '../lib/workers.js';

const SENDERS = 2;
const BATCH = 500;
const DURATION_MS = 10_000;
const ROUNDS = 2;
const USER_PROFILES = 20;

export interface RecognitionIngestPhase {
  mode: 'profiles' | 'generic';
  seconds: number;
  stored: number;
  toolCalls: number;
  eventsPerSecond: number;
  statuses: Record<string, number>;
}

export interface RecognitionIngestResult {
  senders: number;
  batchSize: number;
  phases: RecognitionIngestPhase[];
  /** Median events stored per second with profiles / with the generic reading alone. */
  ratio: number;
}

/** 20 organization profiles that match none of the records (each is tried on every record: the worst case). */
async function addProfiles(db: BenchDatabase, orgId: string): Promise<void> {
  for (let i = 0; i < USER_PROFILES; i++) {
    const body = {
      id: `org-${i}`,
      description: '',
      source: '',
      when: `source == 'otlp' && name == 'acme.gateway-${i}' && 'thing' in attributes`,
      fields: { tool: 'attributes.thing', session: "'sess' in attributes ? attributes.sess : null", action: "'allow'" },
    };
    await db.query('INSERT INTO recognition_profiles (org_id, profile_id, version, body) VALUES ($1, $2, 1, $3::jsonb)', [orgId, body.id, JSON.stringify(body)]);
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

export async function runRecognitionIngest(ctx: RunContext): Promise<RecognitionIngestResult> {
  const db = await createDatabase();
  try {
    const profiles = await startServer('recognition-profiles', ctx.entry.args, serviceEnv(db, `${ctx.redisPrefix}rp:`, ctx.adminToken));
    const generic = await startServer('recognition-generic', ctx.entry.args, serviceEnv(db, `${ctx.redisPrefix}rg:`, ctx.adminToken, { RECOGNITION_BUILTIN_PROFILES: 'false' }));
    try {
      const phase = async (mode: 'profiles' | 'generic', round: number): Promise<RecognitionIngestPhase> => {
        const svc = mode === 'profiles' ? profiles : generic;
        const org = await createOrg(svc.url, ctx.adminToken, `recognition ${mode} ${round}`);
        if (mode === 'profiles') await addProfiles(db, org.id);
        const workers = Array.from({ length: SENDERS }, (_, i) => startWorker('workloads/otlp-sender.ts', { url: svc.url, key: org.key, tag: `${mode}${round}-${i}`, batchSize: BATCH, durationMs: DURATION_MS, mode: 'agent-logs' }));
        let done: SendLoopDone[];
        try {
          await Promise.all(workers.map((w) => w.next('ready')));
          for (const w of workers) w.send({ type: 'go' });
          done = await Promise.all(workers.map((w) => w.next<SendLoopDone>('done', DURATION_MS + 60_000)));
        } finally {
          await Promise.all(workers.map((w) => w.stop()));
        }
        const seconds = (Math.max(...done.map((d) => d.ended)) - Math.min(...done.map((d) => d.started))) / 1000;
        const statuses: Record<string, number> = {};
        for (const d of done) for (const [s, n] of Object.entries(d.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
        const [row] = await db.query<{ n: string; calls: string }>(
          `SELECT count(*) AS n, count(*) FILTER (WHERE type = 'tool_call') AS calls FROM audit_events WHERE org_id = $1 AND source = 'otlp'`,
          [org.id],
        );
        const stored = Number(row.n);
        ctx.log(`    ${mode} (round ${round + 1}): ${stored} stored (${row.calls} tool calls) in ${seconds.toFixed(1)} s`);
        return { mode, seconds, stored, toolCalls: Number(row.calls), eventsPerSecond: stored / seconds, statuses };
      };
      const phases: RecognitionIngestPhase[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const mode of round % 2 === 0 ? (['profiles', 'generic'] as const) : (['generic', 'profiles'] as const)) phases.push(await phase(mode, round));
      }
      const rate = (mode: 'profiles' | 'generic') => median(phases.filter((p) => p.mode === mode).map((p) => p.eventsPerSecond));
      return { senders: SENDERS, batchSize: BATCH, phases, ratio: rate('profiles') / rate('generic') };
    } finally {
      await Promise.all([profiles.stop(), generic.stop()]);
    }
  } finally {
    await db.drop();
  }
}
