// One streaming measurement: client processes connect, a publisher process posts batches, receipts are matched to sends by seq.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Histogram, type HistogramData } from './histogram.js';
import { TMP } from './service.js';
import { startWorker, type Worker, type WorkerMessage } from './workers.js';
import type { SentBatch } from '../workloads/publisher.js';
import { toolCallBatch } from '../workloads/tool-calls.js';

export interface ClientGroup {
  name: string;
  url: string;
  count: number;
}

export interface StreamCaseOptions {
  publishUrl: string;
  key: string;
  tag: string;
  groups: ClientGroup[];
  /** 'burst': `batches` batches as fast as they are taken (durationMs then only bounds the wait for them). */
  publisher: { mode: 'max' | 'paced' | 'burst'; batchSize: number; durationMs: number; concurrency: number; rate?: number; batches?: number };
  /** Clients resume as EventSource does when the server ends their stream, and every id they get is checked. */
  resume?: boolean;
  /** How long to wait for every client to have the last event (default 30 s). */
  drainTimeoutMs?: number;
  /** The seq of each batch's last event (by batch number), and the last seq stored, once publishing is over. */
  seqsOf(sent: SentBatch[]): Promise<{ lastSeqOf: Map<number, number>; finalSeq: number }>;
  log(line: string): void;
  /** Called right before publishing starts and once every client has the last event (e.g. to read CPU counters). */
  measure?: { start(): Promise<void>; stop(): Promise<void> };
}

export interface LatencySummary {
  p50: number;
  p99: number;
  max: number;
}

export interface GroupResult {
  clients: number;
  connected: number;
  /** Events received, summed over clients. */
  deliveries: number;
  deliveriesPerSecond: number;
  /** From the publisher's start to the last client's receipt of its last event. */
  deliverySeconds: number;
  /** Clients every event reached / clients that were cut or ended early. */
  complete: number;
  closed: number;
  /** From the publisher's receipt of the ingest response to the client's receipt of the batch (negative: before). */
  latencyAfterResponseMs: LatencySummary;
  /** From the publisher sending the request to the client's receipt (includes the database commit). */
  latencyAfterSendMs: LatencySummary;
  /** With resuming clients: streams the server ended and how the clients fared across them. */
  resumes?: ResumeCounts;
}

export interface ResumeCounts {
  /** Streams the server ended during the run (each followed by a resume), and the clients that had at least one. */
  cuts: number;
  clientsCut: number;
  /** Clients whose ids each followed the one before (no repeat, no gap), and clients that got the last event. */
  inOrder: number;
  reachedLast: number;
  repeats: number;
  gaps: number;
}

export interface StreamCaseResult {
  requests: number;
  failedRequests: number;
  eventsPublished: number;
  publishSeconds: number;
  eventsPerSecond: number;
  /** Ingest request round trip as the publisher saw it. */
  requestLatencyMs: LatencySummary;
  groups: Record<string, GroupResult>;
}

interface Report extends WorkerMessage {
  deliveries: number;
  firstReceipt: number;
  lastReceipt: number;
  fromResponse: HistogramData;
  fromSend: HistogramData;
  open: number;
  closed: number;
  resumes?: ResumeCounts;
}

const CLIENTS_PER_PROCESS = 1000;

/** Warms the server before anything is measured (JIT, database pool connections, prepared paths): 40 batches, 4 at a time. */
async function warmUp(o: StreamCaseOptions): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < 40) {
        const body = JSON.stringify(toolCallBatch(`${o.tag}warm`, next++, o.publisher.batchSize));
        const r = await fetch(`${o.publishUrl}/api/v1/ingest/events`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${o.key}` }, body });
        if (r.status !== 200) throw new Error(`warm-up ingest answered ${r.status}: ${await r.text()}`);
      }
    }),
  );
}

export async function runStreamCase(o: StreamCaseOptions): Promise<StreamCaseResult> {
  await warmUp(o);
  const workers: { group: ClientGroup; worker: Worker }[] = [];
  const publisher = startWorker('workloads/publisher.ts', { url: o.publishUrl, path: '/api/v1/ingest/events', key: o.key, tag: o.tag, ...o.publisher });
  try {
    for (const group of o.groups) {
      for (let left = group.count; left > 0; left -= CLIENTS_PER_PROCESS) {
        workers.push({ group, worker: startWorker('workloads/sse-clients.ts', { url: group.url, key: o.key, count: Math.min(left, CLIENTS_PER_PROCESS), resume: o.resume }) });
      }
    }
    const ready = await Promise.all(workers.map((w) => w.worker.next<WorkerMessage & { open: number }>('ready', 120_000)));
    const connected = new Map<string, number>();
    ready.forEach((r, i) => connected.set(workers[i].group.name, (connected.get(workers[i].group.name) ?? 0) + r.open));
    await publisher.next('ready');
    const span = o.publisher.mode === 'burst' ? `${o.publisher.batches} of them` : `for ${o.publisher.durationMs / 1000} s`;
    o.log(`    ${[...connected].map(([g, n]) => `${n} clients on ${g}`).join(', ')}; publishing (${o.publisher.mode}, batches of ${o.publisher.batchSize}) ${span}`);
    await o.measure?.start();
    publisher.send({ type: 'go' });
    const done = await publisher.next<WorkerMessage & { started: number; ended: number; sent: SentBatch[] }>('done', o.publisher.durationMs + 120_000);
    const ok = done.sent.filter((s) => s.status === 200);
    const { lastSeqOf, finalSeq } = await o.seqsOf(ok);

    const drainMs = o.drainTimeoutMs ?? 30_000;
    for (const w of workers) w.worker.send({ type: 'cmd', seq: finalSeq, timeoutMs: drainMs });
    await Promise.all(workers.map((w) => w.worker.next('drained', drainMs + 30_000)));
    await o.measure?.stop();
    const table = ok
      .filter((s) => lastSeqOf.has(s.batch))
      .map((s) => [lastSeqOf.get(s.batch)!, s.sendT, s.respT] as [number, number, number])
      .sort((a, b) => a[0] - b[0]);
    for (const w of workers) w.worker.send({ type: 'cmd', batches: table, finalSeq });
    const reports = await Promise.all(workers.map((w) => w.worker.next<Report>('report', 60_000)));

    const groups: Record<string, GroupResult> = {};
    for (const group of o.groups) {
      const mine = reports.filter((_, i) => workers[i].group === group);
      const afterResponse = new Histogram();
      const afterSend = new Histogram();
      for (const r of mine) {
        afterResponse.merge(r.fromResponse);
        afterSend.merge(r.fromSend);
      }
      const deliveries = mine.reduce((a, r) => a + r.deliveries, 0);
      const lastReceipt = Math.max(...mine.map((r) => r.lastReceipt));
      const summary = (h: Histogram) => {
        const { p50, p99, max } = h.summary();
        return { p50, p99, max };
      };
      groups[group.name] = {
        clients: group.count,
        connected: connected.get(group.name) ?? 0,
        deliveries,
        deliveriesPerSecond: deliveries / ((lastReceipt - done.started) / 1000),
        deliverySeconds: (lastReceipt - done.started) / 1000,
        complete: mine.reduce((a, r) => a + r.open, 0),
        closed: mine.reduce((a, r) => a + r.closed, 0),
        latencyAfterResponseMs: summary(afterResponse),
        latencyAfterSendMs: summary(afterSend),
      };
      if (o.resume) {
        const sum = (k: keyof ResumeCounts) => mine.reduce((a, r) => a + (r.resumes?.[k] ?? 0), 0);
        groups[group.name].resumes = { cuts: sum('cuts'), clientsCut: sum('clientsCut'), inOrder: sum('inOrder'), reachedLast: sum('reachedLast'), repeats: sum('repeats'), gaps: sum('gaps') };
      }
    }
    const eventsPublished = ok.length * o.publisher.batchSize;
    const requestLatency = new Histogram();
    for (const s of done.sent) requestLatency.record(s.respT - s.sendT);
    if (process.env.BENCH_DEBUG) {
      const t0 = done.started;
      writeFileSync(path.join(TMP, `sent-${o.tag}.json`), JSON.stringify(done.sent.map((s) => [s.batch, Math.round(s.sendT - t0), Math.round(s.respT - s.sendT), lastSeqOf.get(s.batch)])));
    }
    const publishSeconds = (done.ended - done.started) / 1000;
    return {
      requests: done.sent.length,
      failedRequests: done.sent.length - ok.length,
      eventsPublished,
      publishSeconds,
      eventsPerSecond: eventsPublished / publishSeconds,
      requestLatencyMs: (({ p50, p99, max }) => ({ p50, p99, max }))(requestLatency.summary()),
      groups,
    };
  } finally {
    await Promise.all([publisher.stop(), ...workers.map((w) => w.worker.stop())]);
  }
}
