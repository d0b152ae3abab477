// History scenario: ingest rate and the first-page latency of every documented filter over HTTP, on an organization
// holding only an ingest run's events and on one filled by SQL to 5 M events over 90 days (BENCH_HISTORY_EVENTS);
// bytes per event; one retention pass (30 days) with ingest running beside it.
import path from 'node:path';
import { nowMs, sleep } from '../lib/clock.js';
import type { RunContext } from '../lib/context.js';
import { Histogram } from '../lib/histogram.js';
import { loadAverage } from '../lib/machine.js';
import { explainProbe, filterValues, historyProbes, newestOccurredMs, type FilterValues, type Probe, type Sql } from '../lib/history-filters.js';
import { createDatabase, createOrg, serviceEnv, type BenchDatabase, type BenchOrg } from '../lib/provision.js';
import { psqlFile } from '../lib/psql.js';
import { measureRetentionPass, type RetentionMeasure } from '../lib/retention-measure.js';
import { measureSpaceReuse, type SpaceReuse } from '../lib/space-reuse.js';
import { ROOT, startServer } from '../lib/service.js';
import { startWorker } from '../lib/workers.js';
import type { SendLoopDone } from '../lib/send-loop.js';

const EVENTS = Number(process.env.BENCH_HISTORY_EVENTS ?? 5_000_000);
const SENDERS = 4;
const BATCH = 500;
const INGEST_MS = 10_000;
const REQUESTS = 100;
const WARMUP = 3;
const RETENTION_DAYS = 30;
/** Ingest beside the retention pass: a steady stream of smaller batches, its latency compared with the time before. */
const PASS_SENDERS = 2;
const PASS_BATCH = 200;
const PASS_CALM_MS = 10_000;
/** After the pass: cycles of removing this share of the organization's oldest events and appending as many. */
const SPACE_CYCLES = 3;
const SPACE_CYCLE_FRACTION = 0.1;

export interface LatencySummary {
  requests: number;
  p50: number;
  p99: number;
  max: number;
}

export interface HistoryIngest {
  senders: number;
  batchSize: number;
  seconds: number;
  requests: number;
  failedRequests: number;
  eventsStored: number;
  eventsPerSecond: number;
  requestLatencyMs: LatencySummary;
  /** The machine's 1-minute load average at the end of the run (other work on a shared machine moves one trial). */
  loadAverage: number;
}

export interface ProbeLatency {
  name: string;
  /** A page of GET /api/v1/audit-events, or the stats window (an aggregate, not a page). */
  kind: 'list' | 'stats';
  order: string | null;
  query: string;
  /** Items of the page (list) or tool calls counted (stats). */
  items: number;
  failed: number;
  latencyMs: LatencySummary;
}

export interface HistoryPhase {
  /** Events of the organization when its filters were measured. */
  orgEvents: number;
  values: FilterValues;
  ingest: HistoryIngest;
  probes: ProbeLatency[];
}

export interface HistorySize {
  rows: number;
  totalBytes: number;
  heapBytes: number;
  /** TOAST, free-space and visibility maps. */
  otherBytes: number;
  hoursBytes: number;
  /** The log batches' shared metadata (audit_contexts, migration 010), with its indexes. */
  contextsBytes: number;
  indexes: { name: string; bytes: number }[];
  bytesPerEvent: number;
}

export interface HistoryResult {
  events: number;
  /** The fill, then VACUUM ANALYZE (autovacuum may be off: the bench does what it would), then CHECKPOINT. */
  fill: { seconds: number; vacuumSeconds: number; checkpointSeconds: number };
  before: HistoryPhase;
  after: HistoryPhase;
  size: HistorySize;
  /** EXPLAIN (ANALYZE, BUFFERS) of each probe after the fill, once. */
  plans: { name: string; order: string | null; plan: string; buffers: number; ms: number }[];
  retention: RetentionMeasure & { senders: number; batchSize: number; ingestCalm: LatencySummary; ingestDuringPass: LatencySummary; ingestFailed: number };
  /** Whether removed space is used again (removal by DELETE, not partition drops): after the pass, then steady cycles. */
  spaceReuse: SpaceReuse;
  /** Events stored per second after the fill over before. */
  ingestRatio: number;
  /** The field-filter page probe (not free text, not the stats window) with the highest p99 after the fill. */
  slowestAfter: { name: string; order: string | null; p99: number };
  /**
   * The free-text page probe with the highest p99 after the fill: free text is a scan of its time range (bounded by
   * SEARCH_MAX_RANGE_HOURS and SEARCH_QUERY_TIMEOUT_MS, docs/performance-history.md), so it has no page target.
   */
  slowestFreeTextAfter: { name: string; order: string | null; p99: number } | null;
}

/** With `timeline`: [start (monotonic ms), latency ms] of every request. */
type SenderDone = SendLoopDone & { timeline?: [number, number][] };

const summary = (h: Histogram): LatencySummary => {
  const s = h.summary();
  return { requests: s.count, p50: s.p50, p99: s.p99, max: s.max };
};

async function eventSeq(db: BenchDatabase, orgId: string): Promise<number> {
  const [row] = await db.query<{ event_seq: string }>('SELECT event_seq FROM organizations WHERE id = $1', [orgId]);
  return Number(row.event_seq);
}

/** 4 CloudWatch senders into the organization for INGEST_MS, as the ingest scenario (one trial, shorter). */
async function ingestRun(ctx: RunContext, url: string, db: BenchDatabase, org: BenchOrg, seed: number): Promise<HistoryIngest> {
  const seq0 = await eventSeq(db, org.id);
  const workers = Array.from({ length: SENDERS }, (_, i) => startWorker('workloads/ingest-sender.ts', { url, key: org.key, seed: seed + i, batchSize: BATCH, durationMs: INGEST_MS }));
  let done: SenderDone[];
  try {
    await Promise.all(workers.map((w) => w.next('ready')));
    for (const w of workers) w.send({ type: 'go' });
    done = await Promise.all(workers.map((w) => w.next<SenderDone>('done', INGEST_MS + 60_000)));
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
  const seconds = (Math.max(...done.map((d) => d.ended)) - Math.min(...done.map((d) => d.started))) / 1000;
  const latency = new Histogram();
  let ok = 0;
  for (const d of done) {
    latency.merge(d.latency);
    ok += d.statuses['200'] ?? 0;
  }
  const requests = done.reduce((a, d) => a + d.requests, 0);
  const eventsStored = (await eventSeq(db, org.id)) - seq0;
  const r = { senders: SENDERS, batchSize: BATCH, seconds, requests, failedRequests: requests - ok, eventsStored, eventsPerSecond: eventsStored / seconds, requestLatencyMs: summary(latency), loadAverage: loadAverage() };
  ctx.log(`    ingest: ${SENDERS} senders x ${BATCH}-line CloudWatch batches, ${eventsStored} events in ${seconds.toFixed(1)} s = ${Math.round(r.eventsPerSecond)}/s, p50 / p99 ${r.requestLatencyMs.p50.toFixed(0)} / ${r.requestLatencyMs.p99.toFixed(0)} ms`);
  return r;
}

/** REQUESTS sequential GETs of each probe (after WARMUP), with the organization's key, on one kept-alive connection. */
async function measureProbes(ctx: RunContext, url: string, key: string, probes: Probe[]): Promise<ProbeLatency[]> {
  const get = async (p: string, query: Record<string, string>) => {
    const r = await fetch(`${url}${p}?${new URLSearchParams(query)}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: r.status, body: (await r.json()) as { items?: { seq: number }[]; nextCursor?: string | null; total?: number; count?: number } };
  };
  const out: ProbeLatency[] = [];
  for (const probe of probes) {
    let query = probe.query;
    if (probe.page2) {
      const first = await get(probe.path, query);
      const cursor = first.body.nextCursor;
      if (!cursor) throw new Error(`${probe.name}: the first page has no nextCursor (${first.status})`);
      query = { ...query, cursor };
      // The second page continues the first: every seq past the cursor, in the same order.
      const second = await get(probe.path, query);
      const last = first.body.items![first.body.items!.length - 1].seq;
      const next = second.body.items?.[0]?.seq;
      if (next !== undefined && (query.order === 'asc' ? next <= last : next >= last)) throw new Error(`${probe.name}: page 2 starts at seq ${next}, not past ${last}`);
    }
    const latency = new Histogram();
    let failed = 0;
    let items = 0;
    for (let i = 0; i < WARMUP + REQUESTS; i++) {
      const t0 = nowMs();
      const r = await get(probe.path, query);
      const ms = nowMs() - t0;
      if (i < WARMUP) continue;
      latency.record(ms);
      if (r.status !== 200) failed++;
      items = r.body.items?.length ?? r.body.total ?? r.body.count ?? 0;
    }
    const s = summary(latency);
    out.push({ name: probe.name, kind: probe.path === '/api/v1/audit-events' ? 'list' : 'stats', order: probe.query.order ?? null, query: new URLSearchParams(query).toString(), items, failed, latencyMs: s });
  }
  const worst = out.filter((p) => p.kind === 'list' && !new URLSearchParams(p.query).has('q')).sort((a, b) => b.latencyMs.p99 - a.latencyMs.p99)[0];
  const worstFree = out.filter((p) => p.kind === 'list' && new URLSearchParams(p.query).has('q')).sort((a, b) => b.latencyMs.p99 - a.latencyMs.p99)[0];
  const stats = out.filter((p) => p.kind === 'stats').map((p) => `${p.name} p99 ${p.latencyMs.p99.toFixed(1)} ms`);
  ctx.log(`    ${out.length} probes x ${REQUESTS} requests; slowest field-filter page p99: ${worst.name} ${worst.order ?? ''} ${worst.latencyMs.p99.toFixed(1)} ms; slowest free-text page p99 (a scan of its range): ${worstFree ? `${worstFree.name} ${worstFree.latencyMs.p99.toFixed(1)} ms` : 'none'}; ${stats.join(', ')}`);
  return out;
}

/**
 * The ingest run, then every probe. `values` (servers, tools, session) are read from the organization's events when
 * not given; time ranges are relative to its newest event after the ingest run.
 */
async function phase(ctx: RunContext, url: string, db: BenchDatabase, org: BenchOrg, seed: number, values: FilterValues | null): Promise<HistoryPhase> {
  const ingest = await ingestRun(ctx, url, db, org, seed);
  // As autovacuum would within its naptime after that many new rows: the planner sees the organization's events.
  await db.query('ANALYZE audit_events');
  const sql: Sql = (text, params) => db.query(text, params);
  const v = { ...(values ?? (await filterValues(sql, org.id))), newestMs: await newestOccurredMs(sql, org.id) };
  const probes = await measureProbes(ctx, url, org.key, historyProbes(v));
  return { orgEvents: await eventSeq(db, org.id), values: v, ingest, probes };
}

async function measureSize(db: BenchDatabase): Promise<HistorySize> {
  const [t] = await db.query<{ rows: string; total: string; heap: string; hours: string; contexts: string }>(
    `SELECT (SELECT count(*) FROM audit_events) AS rows, pg_total_relation_size('audit_events') AS total,
            pg_relation_size('audit_events') AS heap, pg_total_relation_size('audit_event_hours') AS hours,
            pg_total_relation_size('audit_contexts') AS contexts`,
  );
  const indexes = await db.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS name, pg_relation_size(c.oid) AS bytes FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = 'audit_events'::regclass ORDER BY 2 DESC`,
  );
  const idx = indexes.map((r) => ({ name: r.name, bytes: Number(r.bytes) }));
  const total = Number(t.total);
  const heap = Number(t.heap);
  const hours = Number(t.hours);
  return {
    rows: Number(t.rows),
    totalBytes: total,
    heapBytes: heap,
    otherBytes: total - heap - idx.reduce((a, r) => a + r.bytes, 0),
    hoursBytes: hours,
    contextsBytes: Number(t.contexts),
    indexes: idx,
    bytesPerEvent: (total + hours + Number(t.contexts)) / Number(t.rows),
  };
}

/** The fill, printing the table's size as it grows (the INSERT is one statement). */
async function fill(ctx: RunContext, db: BenchDatabase, orgId: string): Promise<number> {
  const t0 = nowMs();
  const timer = setInterval(() => {
    void db
      .query<{ b: string }>(`SELECT pg_total_relation_size('audit_events') AS b`)
      .then(([r]) => ctx.log(`    fill: ${((nowMs() - t0) / 1000).toFixed(0)} s, audit_events ${(Number(r.b) / 2 ** 20).toFixed(0)} MiB`))
      .catch(() => undefined);
  }, 15_000);
  try {
    await psqlFile(db.url, path.join(ROOT, 'bench/sql/history-fill.sql'), { n: EVENTS, org: orgId });
  } finally {
    clearInterval(timer);
  }
  return (nowMs() - t0) / 1000;
}

/** Ingest beside one retention pass: latency of the requests before it (calm) and of those overlapping it. */
async function retentionUnderIngest(ctx: RunContext, url: string, db: BenchDatabase, org: BenchOrg): Promise<HistoryResult['retention']> {
  const put = await fetch(`${url}/api/v1/admin/organizations/${org.id}/retention`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${ctx.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ days: RETENTION_DAYS }),
  });
  if (put.status !== 200) throw new Error(`PUT retention: ${put.status} ${await put.text()}`);
  const workers = Array.from({ length: PASS_SENDERS }, (_, i) =>
    startWorker('workloads/ingest-sender.ts', { url, key: org.key, seed: 300 + i, batchSize: PASS_BATCH, durationMs: 30 * 60_000, timeline: true }),
  );
  let measure: RetentionMeasure;
  let done: SenderDone[];
  let passStart: number;
  let passEnd: number;
  try {
    await Promise.all(workers.map((w) => w.next('ready')));
    for (const w of workers) w.send({ type: 'go' });
    ctx.log(`    retention: ${PASS_SENDERS} senders x ${PASS_BATCH}-line batches; ${PASS_CALM_MS / 1000} s calm, then one pass (${RETENTION_DAYS} days)`);
    await sleep(PASS_CALM_MS);
    passStart = nowMs();
    measure = await measureRetentionPass(db.url, org.id);
    passEnd = nowMs();
    for (const w of workers) w.send({ type: 'stop' });
    done = await Promise.all(workers.map((w) => w.next<SenderDone>('done')));
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
  const calm = new Histogram();
  const during = new Histogram();
  for (const d of done) {
    for (const [start, ms] of d.timeline ?? []) {
      if (start + ms < passStart) calm.record(ms);
      else if (start < passEnd) during.record(ms);
    }
  }
  const failed = done.reduce((a, d) => a + d.requests - (d.statuses['200'] ?? 0), 0);
  const r = { ...measure, senders: PASS_SENDERS, batchSize: PASS_BATCH, ingestCalm: summary(calm), ingestDuringPass: summary(during), ingestFailed: failed };
  ctx.log(
    `    retention: ${r.removedEvents} events removed in ${(r.durationMs / 1000).toFixed(1)} s; longest DELETE ${r.deletes.maxMs.toFixed(0)} ms, ` +
      `longest seq-lock transaction ${r.seqLockTransactions.maxMs.toFixed(0)} ms; ingest p99 calm ${r.ingestCalm.p99.toFixed(0)} ms, during ${r.ingestDuringPass.p99.toFixed(0)} ms (max ${r.ingestDuringPass.max.toFixed(0)})`,
  );
  return r;
}


export async function runHistory(ctx: RunContext): Promise<HistoryResult> {
  const db = await createDatabase();
  try {
    // The service's own retention timer stays out of the way: the pass is run (and timed) here.
    const svc = await startServer('history', ctx.entry.args, serviceEnv(db, `${ctx.redisPrefix}history:`, ctx.adminToken, { RETENTION_INTERVAL_MS: '86400000' }));
    try {
      const small = await createOrg(svc.url, ctx.adminToken, 'history before');
      const big = await createOrg(svc.url, ctx.adminToken, 'history big');

      ctx.log('  before the fill: an organization holding one ingest run');
      const before = await phase(ctx, svc.url, db, small, 100, null);

      ctx.log(`  fill: ${EVENTS.toLocaleString('en-US')} events over 90 days by SQL (bench/sql/history-fill.sql), then VACUUM ANALYZE`);
      const fillSeconds = await fill(ctx, db, big.id);
      const v0 = nowMs();
      await db.query('VACUUM ANALYZE');
      const vacuumSeconds = (nowMs() - v0) / 1000;
      // History that accumulated over weeks is on disk, not gigabytes of dirty pages the after-run would flush.
      const c0 = nowMs();
      await db.query('CHECKPOINT');
      const checkpointSeconds = (nowMs() - c0) / 1000;
      ctx.log(`    fill ${fillSeconds.toFixed(0)} s, VACUUM ANALYZE ${vacuumSeconds.toFixed(0)} s, CHECKPOINT ${checkpointSeconds.toFixed(0)} s`);
      const size = await measureSize(db);
      ctx.log(`    ${size.rows} rows, ${(size.totalBytes / 2 ** 20).toFixed(0)} MiB + hour map ${(size.hoursBytes / 2 ** 20).toFixed(1)} MiB + contexts ${(size.contextsBytes / 2 ** 20).toFixed(1)} MiB = ${size.bytesPerEvent.toFixed(0)} bytes/event`);

      ctx.log('  after the fill: the filled organization');
      // Values from the filled history (before this phase's ingest adds its own servers and tools).
      const values = await filterValues((text, params) => db.query(text, params), big.id);
      const after = await phase(ctx, svc.url, db, big, 200, values);
      const sql: Sql = (text, params) => db.query(text, params);
      const plans = [];
      for (const probe of historyProbes(after.values)) {
        const e = await explainProbe(sql, big.id, probe);
        plans.push({ name: probe.name, order: probe.query.order ?? null, ...e });
      }

      const bytesBeforePass = (await measureSize(db)).totalBytes;
      const retention = await retentionUnderIngest(ctx, svc.url, db, big);
      const spaceReuse = await measureSpaceReuse(ctx, db, big.id, retention.removedEvents, bytesBeforePass, SPACE_CYCLES, SPACE_CYCLE_FRACTION);
      const slowest = (free: boolean) => after.probes.filter((p) => p.kind === 'list' && new URLSearchParams(p.query).has('q') === free).sort((a, b) => b.latencyMs.p99 - a.latencyMs.p99)[0];
      const worst = slowest(false);
      const worstFree = slowest(true);
      return {
        events: EVENTS,
        fill: { seconds: fillSeconds, vacuumSeconds, checkpointSeconds },
        before,
        after,
        size,
        plans,
        retention,
        spaceReuse,
        ingestRatio: after.ingest.eventsPerSecond / before.ingest.eventsPerSecond,
        slowestAfter: { name: worst.name, order: worst.order, p99: worst.latencyMs.p99 },
        slowestFreeTextAfter: worstFree ? { name: worstFree.name, order: worstFree.order, p99: worstFree.latencyMs.p99 } : null,
      };
    } finally {
      await svc.stop();
    }
  } finally {
    await db.drop();
  }
}
