// Turns the scenario results into the target verdicts, the printed table, bench/results.json and bench/RESULTS.md.
import type { BusBackend, BusBackendsResult, BusRound } from '../scenarios/bus-backends.js';
import type { ConnectionsResult } from '../scenarios/connections.js';
import type { CrossInstanceResult } from '../scenarios/cross-instance.js';
import type { FanoutSummary } from '../scenarios/fanout.js';
import type { FanoutResumeSummary } from '../scenarios/fanout-resume.js';
import type { HistoryResult } from '../scenarios/history.js';
import type { IngestLogSummary, IngestSummary } from '../scenarios/ingest.js';
import type { OtlpResult } from '../scenarios/otlp.js';
import type { PostgresCostResult } from '../scenarios/postgres-cost.js';
import type { ProxyBenchResult } from '../scenarios/proxy.js';
import type { MerkleLogResult } from '../scenarios/merkle-log.js';
import type { RecognitionResult } from '../scenarios/recognition.js';
import type { RecognitionIngestResult } from '../scenarios/recognition-ingest.js';
import type { MachineInfo } from './machine.js';

export interface BenchResults {
  machine: MachineInfo;
  server: { mode: 'dist' | 'source'; command: string };
  scenarios: { ingest?: IngestSummary; ingestPlain?: IngestSummary; otlp?: OtlpResult; fanout?: FanoutSummary; fanoutResume?: FanoutResumeSummary; crossInstance?: CrossInstanceResult; busBackends?: BusBackendsResult; postgresCost?: PostgresCostResult; connections?: ConnectionsResult; history?: HistoryResult; proxy?: ProxyBenchResult; merkleLog?: MerkleLogResult; ingestLog?: IngestLogSummary; recognition?: RecognitionResult; recognitionIngest?: RecognitionIngestResult };
  /** Seconds each scenario took, and the machine's 1-minute load average around it. */
  timings: Record<string, { seconds: number; loadBefore: number; loadAfter: number }>;
  errors: Record<string, string>;
  targets: Target[];
  totalSeconds: number;
}

export interface Target {
  name: string;
  target: string;
  value: string;
  /** null when the scenario did not run or failed. */
  pass: boolean | null;
}

export const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
export const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(n !== 0 && Math.abs(n) < 10 ? 2 : 1)} ms` : 'n/a');
export const ratio = (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}x` : 'n/a');
const millions = (n: number) => (Number.isFinite(n) ? `${(n / 1e6).toFixed(2)} M` : 'n/a');
export const millionsOf = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(n % 1e6 ? 1 : 0)} M` : int(n));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? NaN;
const kb = (n: number) => (Number.isFinite(n) ? `${n.toFixed(1)} KB` : 'n/a');

export function evaluateTargets(s: BenchResults['scenarios']): Target[] {
  const i = s.ingest;
  const f = s.fanout;
  const fr = s.fanoutResume;
  const frs = fr?.service.groups.service;
  const x = s.crossInstance?.run.groups.other;
  const c = s.connections;
  const h = s.history;
  const m = s.merkleLog;
  return [
    { name: 'merkle log: ingest events/s with the log / without', target: '>= 0.90x', value: s.ingestLog ? ratio(s.ingestLog.ratio) : 'n/a', pass: s.ingestLog ? s.ingestLog.ratio >= 0.9 : null },
    { name: 'merkle log: append time with the log / without', target: '<= 1.10x', value: m ? ratio(m.slowdown) : 'n/a', pass: m ? m.slowdown <= 1.1 : null },
    { name: 'merkle log: bytes added per event (on disk)', target: '<= 40', value: m ? m.bytesPerEvent.onDisk.toFixed(1) : 'n/a', pass: m ? m.bytesPerEvent.onDisk <= 40 : null },
    { name: 'ingest: events stored per second', target: '>= 50,000/s', value: i ? `${int(i.eventsPerSecond)}/s` : 'n/a', pass: i ? i.eventsPerSecond >= 50_000 : null },
    { name: 'ingest: ratio to COPY', target: '>= 0.75x', value: i ? ratio(i.ratioToCopy) : 'n/a', pass: i ? i.ratioToCopy >= 0.75 : null },
    { name: 'ingest: Postgres CPU per event / COPY\'s per row', target: '<= 1.25x', value: i ? ratio(i.postgresCpuToCopy) : 'n/a', pass: i ? i.postgresCpuToCopy <= 1.25 : null },
    { name: 'fan-out: ratio to bare node:http', target: '>= 0.50x', value: f ? ratio(f.ratioToBare) : 'n/a', pass: f ? f.ratioToBare >= 0.5 : null },
    { name: 'fan-out with resumes: ratio to bare node:http', target: '>= 0.90x', value: fr ? ratio(fr.ratioToBare) : 'n/a', pass: fr ? fr.ratioToBare >= 0.9 : null },
    { name: 'fan-out with resumes: p99 latency / bare', target: '<= 2.00x', value: fr ? `${ratio(fr.p99RatioToBare)} (${ms(frs!.latencyAfterResponseMs.p99)} vs ${ms(fr.bare.groups.bare.latencyAfterResponseMs.p99)})` : 'n/a', pass: fr ? fr.p99RatioToBare <= 2 : null },
    {
      name: 'fan-out with resumes: clients complete and in order',
      target: 'every client, every trial',
      value: fr ? fr.trials.map((t) => `${t.complete}/${t.inOrder} of ${fr.clients} (${t.cuts} cuts)`).join('; ') : 'n/a',
      pass: fr ? fr.trials.every((t) => t.complete === fr.clients && t.inOrder === fr.clients) : null,
    },
    { name: 'cross-instance: p99 on the other instance', target: '<= 25 ms', value: x ? ms(x.latencyAfterResponseMs.p99) : 'n/a', pass: x ? x.latencyAfterResponseMs.p99 <= 25 : null },
    { name: 'connections: memory per idle stream', target: '<= 16 KB', value: c ? kb(c.service.kbPerConnection) : 'n/a', pass: c ? c.service.kbPerConnection <= 16 : null },
    {
      name: `history: every field filter's first page p99 at ${h ? millionsOf(h.events) : 'N'} events`,
      target: '< 100 ms',
      value: h ? `${ms(h.slowestAfter.p99)} (slowest: ${h.slowestAfter.name}${h.slowestAfter.order ? ` ${h.slowestAfter.order}` : ''})` : 'n/a',
      pass: h ? h.slowestAfter.p99 < 100 : null,
    },
    { name: 'history: ingest after the fill / before', target: '>= 0.80x', value: h ? ratio(h.ingestRatio) : 'n/a', pass: h ? h.ingestRatio >= 0.8 : null },
    { name: 'proxy: added latency p50', target: '<= 2 ms', value: s.proxy ? ms(s.proxy.latency.addedP50) : 'n/a', pass: s.proxy ? s.proxy.latency.addedP50 <= 2 : null },
    { name: 'proxy: calls/s through the proxy / direct', target: '>= 0.80x', value: s.proxy ? ratio(s.proxy.throughput.ratio) : 'n/a', pass: s.proxy ? s.proxy.throughput.ratio >= 0.8 : null },
    {
      name: 'recognition: mapping time with built-in + 20 organization profiles / generic reading alone',
      target: '<= 1.10x',
      value: s.recognition ? ratio(s.recognition.slowdown) : 'n/a',
      pass: s.recognition ? s.recognition.slowdown <= 1.1 : null,
    },
    {
      name: 'recognition ingest: agent log events stored/s with built-in + 20 organization profiles / generic reading alone',
      target: '>= 0.90x',
      value: s.recognitionIngest ? ratio(s.recognitionIngest.ratio) : 'n/a',
      pass: s.recognitionIngest ? s.recognitionIngest.ratio >= 0.9 : null,
    },
  ];
}

const verdict = (p: boolean | null) => (p === null ? 'not run' : p ? 'PASS' : 'FAIL');

/** Rows of the figures table: scenario, measure, service, baseline, ratio, target, result. */
export function tableRows(r: BenchResults): string[][] {
  const { ingest: i, otlp: o, fanout: f, fanoutResume: fr, crossInstance: x, busBackends: bb, postgresCost: pc, connections: c, history: h } = r.scenarios;
  const t = (name: string) => r.targets.find((tt) => tt.name.startsWith(name));
  const rows: string[][] = [];
  if (i) {
    for (const [sink, f] of Object.entries(i.bySink ?? { [i.sink ?? 'default']: null })) {
      const fig = f ?? { eventsPerSecond: i.eventsPerSecond, copyRowsPerSecond: i.copy.rowsPerSecond, ratioToCopy: i.ratioToCopy, postgresCpuToCopy: i.postgresCpuToCopy, copyPostgresCpuMsPer1000Rows: i.copy.postgresCpuMsPer1000Rows, cpuMsPer1000Events: i.cpuMsPer1000Events };
      rows.push([
        'ingest',
        `events stored/s, ${sink} sink (${i.senders} senders x ${i.batchSize}-event awslogs deliveries, ${i.seconds.toFixed(0)} s; median of ${i.trials.filter((x) => x.sink === (f ? sink : i.sink)).length})`,
        int(fig.eventsPerSecond),
        `${int(fig.copyRowsPerSecond)} (psql \\copy into an empty clone)`,
        ratio(fig.ratioToCopy),
        sink === (i.sink ?? 'default') ? `>= 0.75x: ${verdict(t('ingest: ratio')!.pass)}` : '',
      ]);
      rows.push([
        'ingest',
        `CPU per 1,000 events, ${sink} sink: service / all of Postgres (COPY's Postgres per 1,000 rows)`,
        `${fig.cpuMsPer1000Events.service.toFixed(1)} / ${fig.cpuMsPer1000Events.postgres.toFixed(1)} ms`,
        `${fig.copyPostgresCpuMsPer1000Rows.toFixed(1)} ms`,
        ratio(fig.postgresCpuToCopy),
        sink === (i.sink ?? 'default') ? `Postgres <= 1.25x: ${verdict(t('ingest: Postgres')!.pass)}` : '',
      ]);
    }
    rows.push(['ingest', 'request p50 / p99 (500 events)', `${ms(i.requestLatencyMs.p50)} / ${ms(i.requestLatencyMs.p99)}`, '', '', '']);
  }
  const p = r.scenarios.ingestPlain;
  if (p) {
    rows.push([
      'ingest (plain)',
      `events stored/s (spec bodies without ids, 16 per sender resent; ${p.seconds.toFixed(0)} s; median of ${p.trials.length})`,
      int(p.eventsPerSecond),
      `${int(p.copy.rowsPerSecond)} (psql \\copy into the table)`,
      ratio(p.ratioToCopy),
      '',
    ]);
  }
  if (o) {
    rows.push([
      'otlp',
      `spans stored/s (${o.senders} senders x ${o.batchSize}-span protobuf exports, ${o.otlp.seconds.toFixed(0)} s)`,
      int(o.otlp.eventsPerSecond),
      `${int(o.raw.eventsPerSecond)} (raw JSON, same events)`,
      ratio(o.ratioToRaw),
      '',
    ]);
    rows.push(['otlp', 'request p50 / p99 (500 spans)', `${ms(o.otlp.requestLatencyMs.p50)} / ${ms(o.otlp.requestLatencyMs.p99)}`, `${ms(o.raw.requestLatencyMs.p50)} / ${ms(o.raw.requestLatencyMs.p99)}`, '', '']);
  }
  if (f) {
    const sv = f.service.groups.service;
    const bg = f.bare.groups.bare;
    rows.push(['fan-out', `deliveries/s (${f.clients} clients, batches of ${f.batchSize}, events x clients; median of ${f.trials.length})`, millions(sv.deliveriesPerSecond), `${millions(bg.deliveriesPerSecond)} (bare node:http)`, ratio(f.ratioToBare), `>= 0.50x: ${verdict(t('fan-out')!.pass)}`]);
    rows.push(['fan-out', 'events published/s', int(f.service.eventsPerSecond), int(f.bare.eventsPerSecond), '', '']);
    rows.push(['fan-out', 'latency after ingest response p50 / p99', `${ms(sv.latencyAfterResponseMs.p50)} / ${ms(sv.latencyAfterResponseMs.p99)}`, `${ms(bg.latencyAfterResponseMs.p50)} / ${ms(bg.latencyAfterResponseMs.p99)}`, '', '']);
  }
  if (fr) {
    const sv = fr.service.groups.service;
    const bg = fr.bare.groups.bare;
    const rs = sv.resumes!;
    rows.push([
      'fan-out + resumes',
      `deliveries/s (${fr.clients} clients resuming after cuts, ${int(fr.events)}-event burst in batches of ${fr.batchSize}; median of ${fr.trials.length})`,
      millions(sv.deliveriesPerSecond),
      `${millions(bg.deliveriesPerSecond)} (bare node:http)`,
      ratio(fr.ratioToBare),
      `>= 0.90x: ${verdict(t('fan-out with resumes: ratio')!.pass)}`,
    ]);
    rows.push(['fan-out + resumes', 'whole delivery (s); cuts (clients cut)', `${sv.deliverySeconds.toFixed(1)} s; ${rs.cuts} (${rs.clientsCut})`, `${bg.deliverySeconds.toFixed(1)} s`, '', '']);
    rows.push([
      'fan-out + resumes',
      'latency after ingest response p50 / p99',
      `${ms(sv.latencyAfterResponseMs.p50)} / ${ms(sv.latencyAfterResponseMs.p99)}`,
      `${ms(bg.latencyAfterResponseMs.p50)} / ${ms(bg.latencyAfterResponseMs.p99)}`,
      ratio(fr.p99RatioToBare),
      `p99 <= 2x: ${verdict(t('fan-out with resumes: p99')!.pass)}`,
    ]);
    rows.push(['fan-out + resumes', 'clients complete / in order, every trial', fr.trials.map((tr) => `${tr.complete}/${tr.inOrder}`).join(', '), '', '', `all ${fr.clients}: ${verdict(t('fan-out with resumes: clients')!.pass)}`]);
  }
  if (x) {
    const o = x.run.groups.other;
    const s = x.run.groups.same;
    rows.push([
      'cross-instance',
      `latency on the other instance p50 / p99 / max (${x.clientsPerInstance} + ${x.clientsPerInstance} clients, ${x.eventsPerSecond} events/s; median of ${x.trials.length})`,
      `${ms(o.latencyAfterResponseMs.p50)} / ${ms(o.latencyAfterResponseMs.p99)} / ${ms(o.latencyAfterResponseMs.max)}`,
      `same instance: ${ms(s.latencyAfterResponseMs.p50)} / ${ms(s.latencyAfterResponseMs.p99)} / ${ms(s.latencyAfterResponseMs.max)}`,
      '',
      `p99 <= 25 ms: ${verdict(t('cross-instance')!.pass)}`,
    ]);
  }
  if (bb) rows.push(...busBackendRows(bb));
  if (pc) {
    rows.push(['postgres cost', `per 1,000 events: CPU of every Postgres process (CHECKPOINT included) / the service (private Postgres ${pc.postgresVersion}, ingest workload, ${int(pc.eventsPerSecond)} events/s)`, `${pc.postgresCpuMsPer1000.toFixed(1)} ms / ${pc.serviceCpuMsPer1000.toFixed(1)} ms`, '', '', '']);
    rows.push(['postgres cost', 'WAL bytes per event / database growth per event from empty', `${int(pc.walBytesPerEvent)} B / ${int(pc.databaseBytesPerEvent)} B`, '', '', '']);
  }
  if (c) {
    rows.push([
      'connections',
      `resident memory per idle SSE stream (${int(c.service.connections)} streams)`,
      kb(c.service.kbPerConnection),
      `${kb(c.bare.kbPerConnection)} (bare node:http)`,
      ratio(c.ratioToBare),
      `<= 16 KB: ${verdict(t('connections')!.pass)}`,
    ]);
  }
  if (h) {
    const pages = (phase: HistoryResult['after']) => phase.probes.filter((p) => p.kind === 'list' && !new URLSearchParams(p.query).has('q'));
    const freeText = (phase: HistoryResult['after']) => phase.probes.filter((p) => p.kind === 'list' && new URLSearchParams(p.query).has('q'));
    const a = h.after;
    const b = h.before;
    const lat = (l: { p50: number; p99: number; max: number }) => `${ms(l.p50)} / ${ms(l.p99)} / ${ms(l.max)}`;
    rows.push([
      'history',
      `events stored/s after / before the fill to ${millionsOf(h.events)} events (${a.ingest.senders} senders x ${a.ingest.batchSize}-line CloudWatch batches, ${a.ingest.seconds.toFixed(0)} s)`,
      int(a.ingest.eventsPerSecond),
      `${int(b.ingest.eventsPerSecond)} (before the fill)`,
      ratio(h.ingestRatio),
      `>= 0.80x: ${verdict(t('history: ingest')!.pass)}`,
    ]);
    rows.push([
      'history',
      `slowest first-page p99 of ${pages(a).length} filter probes (filters x order, cursor paging; ${a.probes[0]?.latencyMs.requests ?? 0} requests each)`,
      `${ms(h.slowestAfter.p99)} (${h.slowestAfter.name}${h.slowestAfter.order ? ` ${h.slowestAfter.order}` : ''})`,
      `${ms(Math.max(...pages(b).map((p) => p.latencyMs.p99)))} (before the fill)`,
      '',
      `< 100 ms: ${verdict(t('history: every')!.pass)}`,
    ]);
    if (h.slowestFreeTextAfter) {
      rows.push([
        'history',
        `slowest first-page p99 of ${freeText(a).length} free-text probes (a scan of the time range: SEARCH_MAX_RANGE_HOURS, SEARCH_QUERY_TIMEOUT_MS)`,
        `${ms(h.slowestFreeTextAfter.p99)} (${h.slowestFreeTextAfter.name}${h.slowestFreeTextAfter.order ? ` ${h.slowestFreeTextAfter.order}` : ''})`,
        `${ms(Math.max(...freeText(b).map((p) => p.latencyMs.p99)))} (before the fill)`,
        '',
        '',
      ]);
    }
    rows.push([
      'history',
      'median over the filter probes of first-page p50 / p99',
      `${ms(median(pages(a).map((p) => p.latencyMs.p50)))} / ${ms(median(pages(a).map((p) => p.latencyMs.p99)))}`,
      `${ms(median(pages(b).map((p) => p.latencyMs.p50)))} / ${ms(median(pages(b).map((p) => p.latencyMs.p99)))} (before the fill)`,
      '',
      '',
    ]);
    for (const s of a.probes.filter((p) => p.kind === 'stats')) {
      const sb = b.probes.find((p) => p.name === s.name);
      rows.push(['history', `dashboard aggregate: ${s.name} p50 / p99`, `${ms(s.latencyMs.p50)} / ${ms(s.latencyMs.p99)}`, sb ? `${ms(sb.latencyMs.p50)} / ${ms(sb.latencyMs.p99)} (before the fill)` : '', '', '']);
    }
    rows.push(['history', `bytes per event (table, indexes, TOAST, hour map, shared contexts; ${int(h.size.rows)} rows)`, int(h.size.bytesPerEvent), '', '', '']);
    const rt = h.retention;
    rows.push([
      'history',
      `retention pass, ${rt.days} days: ${int(rt.removedEvents)} events removed; longest DELETE / seq-lock transaction`,
      `${(rt.durationMs / 1000).toFixed(1)} s; ${ms(rt.deletes.maxMs)} / ${ms(rt.seqLockTransactions.maxMs)}`,
      '',
      '',
      '',
    ]);
    rows.push(['history', 'ingest request p50 / p99 / max during the pass', lat(rt.ingestDuringPass), `${lat(rt.ingestCalm)} (before the pass)`, '', '']);
    const sr = h.spaceReuse;
    if (sr) {
      const mib = (b: number) => `${int(b / 2 ** 20)} MiB`;
      rows.push(['history', `table size after the pass + VACUUM, then after ${int(sr.refilledEvents)} events appended again + VACUUM`, `${mib(sr.bytesAfterVacuum)} -> ${mib(sr.bytesAfterRefill)}`, `${mib(sr.bytesBeforePass)} (before the pass)`, ratio(sr.bytesAfterRefill / sr.bytesBeforePass), '']);
      if (sr.cycles?.length) {
        const last = sr.cycles[sr.cycles.length - 1];
        rows.push(['history', `then ${sr.cycles.length} cycles of the oldest ~${int(last.removed)} removed + as many appended: size after each`, sr.cycles.map((c) => mib(c.bytes)).join(' -> '), `${mib(sr.bytesAfterRefill)} (before the cycles)`, ratio(last.bytes / sr.bytesAfterRefill), '']);
      }
    }
  }
  const px = r.scenarios.proxy;
  if (px) {
    const l = px.latency;
    rows.push(['proxy', `tools/call p50 / p99, one at a time (${int(l.calls.proxy)} proxied calls)`, `${ms(l.proxyP50)} / ${ms(l.proxyP99)}`, `${ms(l.directP50)} / ${ms(l.directP99)} (direct)`, '', `added p50 <= 2 ms: ${verdict(t('proxy: added')!.pass)} (${ms(l.addedP50)}; p99 ${ms(l.addedP99)})`]);
    rows.push(['proxy', 'a bare one-row INSERT commit p50 / p99 (the floor of the added latency: a call\'s intent is one durable commit)', `${ms(px.commit.p50)} / ${ms(px.commit.p99)}`, '', '', '']);
    if (l.forwardP50 !== undefined) rows.push(['proxy', 'tools/call p50 / p99 through a bare node:http forwarder, one at a time (the cost of any HTTP hop)', `${ms(l.forwardP50)} / ${ms(l.forwardP99!)}`, `${ms(l.directP50)} / ${ms(l.directP99)} (direct)`, '', '']);
    const load = px.loadAverage ? ` (load ${px.loadAverage.start.toFixed(2)} -> ${px.loadAverage.end.toFixed(2)})` : '';
    rows.push(['proxy', `calls/s, ${px.throughput.concurrency} in flight (median of phases; ${px.throughput.errors} errors)`, int(px.throughput.proxyPerSecond), `${int(px.throughput.directPerSecond)} (direct)`, ratio(px.throughput.ratio), `>= 0.80x: ${verdict(t('proxy: calls')!.pass)}${load}`]);
    if (px.throughput.forwardPerSecond !== undefined) {
      rows.push(['proxy', `calls/s, ${px.throughput.concurrency} in flight, through a bare node:http forwarder (no auth, recording or policy: the most any hop leaves)`, int(px.throughput.forwardPerSecond), `${int(px.throughput.directPerSecond)} (direct)`, ratio(px.throughput.forwardRatio!), `proxy / bare forwarder ${ratio(px.throughput.proxyPerSecond / px.throughput.forwardPerSecond)}`]);
    }
    const bp = px.cpu.byPath;
    if (bp) {
      const line = (c: typeof bp.direct, hop: string) => `caller ${ms(c.caller)}, upstream ${ms(c.upstream)}${hop ? `, ${hop} ${ms(c.hop)}` : ''}, Postgres ${ms(c.postgres)}${c.redis !== undefined ? `, Redis ${ms(c.redis)}` : ''}; machine ${ms(c.machine)} (${Math.round(c.idleShare * 100)}% idle)`;
      rows.push(['proxy', 'CPU per call by process (user + system), 16-in-flight phases: proxied', line(bp.proxy, 'service'), '', '', '']);
      rows.push(['proxy', 'CPU per call by process, 16-in-flight phases: bare forwarder / direct', line(bp.forward, 'forwarder'), line(bp.direct, ''), '', '']);
      const cb = px.cpu.cpuBoundRatio;
      if (cb) rows.push(['proxy', 'calls/s ratio to direct if CPU alone limited it (direct\'s CPU per call over the path\'s, every process summed): proxy / bare forwarder', ratio(cb.proxy), `${ratio(cb.forward)} (bare forwarder)`, '', '']);
    } else rows.push(['proxy', 'CPU per call (user + system) during the 16-in-flight phases: the service per proxied call / the upstream per call', ms(px.cpu.serviceMsPerProxiedCall), `${ms(px.cpu.upstreamMsPerCall)} (upstream)`, '', '']);
    const su = px.suspension;
    rows.push(['proxy', `suspension through A to first refused call through B, from the suspend request / its response (${su.samples} samples): p50, max`, `${ms(su.afterRequestP50)}, ${ms(su.afterRequestMax)} / ${ms(su.afterResponseP50)}, ${ms(su.afterResponseMax)}`, '', '', '']);
  }
  const rc = r.scenarios.recognition;
  if (rc) {
    rows.push([
      'recognition',
      `records mapped/s (OTLP logs + traces decoded, CloudWatch lines; ${int(rc.records)} records per round, fastest of ${rc.rounds} interleaved): built-in + ${rc.userProfiles} organization profiles / generic reading alone`,
      int(rc.profiles.recordsPerSecond),
      int(rc.heuristics.recordsPerSecond),
      ratio(rc.slowdown),
      `time <= 1.10x: ${verdict(t('recognition:')!.pass)} (load ${rc.loadAverage.toFixed(2)})`,
    ]);
  }
  const ri = r.scenarios.recognitionIngest;
  if (ri) {
    const rate = (mode: 'profiles' | 'generic') => ri.phases.filter((p) => p.mode === mode).map((p) => int(p.eventsPerSecond)).join(', ');
    rows.push([
      'recognition',
      `agent log events stored/s end to end (${ri.senders} senders x ${ri.batchSize}-record OTLP/JSON exports, alternating phases): built-in + 20 organization profiles / built-in off, no organization profiles`,
      rate('profiles'),
      rate('generic'),
      ratio(ri.ratio),
      `>= 0.90x: ${verdict(t('recognition ingest')!.pass)}`,
    ]);
  }
  return rows;
}

/** The mean of a figure over the rounds of one backend. */
export function busMean(bb: BusBackendsResult, backend: BusBackend, f: (r: BusRound) => number): number {
  const xs = bb.rounds.filter((r) => r.backend === backend).map(f);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Rows of the bus backends scenario: the cluster in the service column, one Redis as the baseline. */
function busBackendRows(bb: BusBackendsResult): string[][] {
  const both = (f: (r: BusRound) => number, fmt: (n: number) => string) => [fmt(busMean(bb, 'redis-cluster', f)), `${fmt(busMean(bb, 'redis', f))} (one Redis)`];
  const lat = (backend: BusBackend) => `${ms(busMean(bb, backend, (r) => r.crossInstance.other.p50))} / ${ms(busMean(bb, backend, (r) => r.crossInstance.other.p99))}`;
  const n = bb.rounds.length / 2;
  const rows: string[][] = [];
  const [co, bo] = [lat('redis-cluster'), `${lat('redis')} (one Redis)`];
  rows.push(['bus backends', `Redis Cluster (3 masters + 3 replicas) vs one Redis: cross-instance latency on the other instance p50 / p99 (${bb.cross.clientsPerInstance} + ${bb.cross.clientsPerInstance} clients, ${bb.cross.rate} events/s; mean of ${n} rounds each)`, co, bo, ratio(busMean(bb, 'redis-cluster', (r) => r.crossInstance.other.p99) / busMean(bb, 'redis', (r) => r.crossInstance.other.p99)), '']);
  const [fd, bd] = both((r) => r.fanout.deliveriesPerSecond, millions);
  rows.push(['bus backends', `fan-out deliveries/s (${bb.fanout.clients} clients, batches of ${bb.fanout.batch})`, fd, bd, ratio(busMean(bb, 'redis-cluster', (r) => r.fanout.deliveriesPerSecond) / busMean(bb, 'redis', (r) => r.fanout.deliveriesPerSecond)), '']);
  const [fc, bc] = both((r) => r.fanout.deliveriesPerCpuSecond, millions);
  rows.push(['bus backends', `fan-out deliveries per CPU second of the service (requests of ${bb.fanout.batch})`, fc, bc, '', '']);
  const [xc, xb] = both((r) => r.crossInstance.deliveriesPerCpuSecond, millions);
  rows.push(['bus backends', `cross-instance deliveries per CPU second of the two services (requests of ${bb.cross.batch}, ingest included)`, xc, xb, '', '']);
  const us = (v: number) => `${v.toFixed(1)} us`;
  const perWrite = (pick: (r: BusRound) => { cpuMicrosecondsPerWrite: number }) => both((r) => pick(r).cpuMicrosecondsPerWrite, us);
  const [fw, bw] = perWrite((r) => r.fanout);
  rows.push(['bus backends', `fan-out: service CPU per batch written to a stream (${int(busMean(bb, 'redis', (r) => r.fanout.eventsPerBatch))} events per published batch)`, fw, bw, '', '']);
  const [cw, sw] = perWrite((r) => r.crossInstance);
  rows.push(['bus backends', `cross-instance: service CPU per batch written to a stream (${int(busMean(bb, 'redis', (r) => r.crossInstance.eventsPerBatch))} events per published batch)`, cw, sw, '', '']);
  const bytes = (pick: (r: BusRound) => number) => both(pick, (v) => `${int(v)} B`);
  const [cm, sm] = both((r) => r.crossInstance.broker.messageBytes, (v) => `${int(v)} B`);
  rows.push(['bus backends', 'published message bytes per event (cross-instance; one message per committed batch)', cm, sm, '', '']);
  const [cb, sb] = bytes((r) => r.crossInstance.broker.bytesIn + r.crossInstance.broker.bytesOut);
  rows.push(['bus backends', `broker bytes in + out per event, anomaly counters included (cross-instance, batches of ${bb.cross.batch}, 2 subscribing instances; replication not included)`, cb, sb, '', '']);
  const [cr, sr] = bytes((r) => r.crossInstance.broker.replicationBytes);
  rows.push(['bus backends', 'broker replication bytes per event (cross-instance)', cr, sr, '', '']);
  const [cu, su] = both((r) => r.crossInstance.broker.cpuMicroseconds, (v) => `${v.toFixed(1)} us`);
  rows.push(['bus backends', 'broker CPU per event, all nodes (cross-instance)', cu, su, '', '']);
  return rows;
}

const HEADER = ['Scenario', 'Measure', 'Service', 'Baseline', 'Ratio', 'Target'];

export function consoleTable(rows: string[][]): string {
  const all = [HEADER, ...rows];
  const widths = HEADER.map((_, j) => Math.max(...all.map((r) => r[j].length)));
  const line = (r: string[]) => r.map((cell, j) => cell.padEnd(widths[j])).join('  ');
  return [line(HEADER), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function markdownTable(rows: string[][]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [`| ${HEADER.join(' | ')} |`, `|${HEADER.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}

export function machineLine(r: BenchResults): string {
  const m = r.machine;
  return `${m.cpus} CPUs (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}, Postgres ${m.postgres}, Redis ${m.redis}; load average ${m.loadAverageAtStart} at start`;
}
