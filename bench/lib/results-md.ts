// Writes bench/RESULTS.md: machine, table, target verdicts and the details behind each figure.
import { int, machineLine, markdownTable, millionsOf, ms, ratio, tableRows, type BenchResults } from './report.js';
import type { BusBackendsResult, BusRound } from '../scenarios/bus-backends.js';
import type { HistoryResult } from '../scenarios/history.js';

const mib = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;

function historyMarkdown(h: HistoryResult): string[] {
  const { before: b, after: a, size, retention: rt } = h;
  const out: string[] = [];
  const lat = (l: { p50: number; p99: number; max: number }) => `${ms(l.p50)} / ${ms(l.p99)} / ${ms(l.max)}`;
  const pp = (l: { p50: number; p99: number }) => `${ms(l.p50)} / ${ms(l.p99)}`;
  out.push(
    '### History',
    '',
    `One service process and database. Before: an organization holding only one ingest run (${int(b.orgEvents)} events). ` +
      `Fill: another organization (created through the admin API, with its key) filled to ${int(h.events)} events over 90 days by ` +
      `\`bench/sql/history-fill.sql\` in ${h.fill.seconds.toFixed(0)} s, then \`VACUUM ANALYZE\` (${h.fill.vacuumSeconds.toFixed(0)} s) as autovacuum would and \`CHECKPOINT\` (${h.fill.checkpointSeconds.toFixed(0)} s: ` +
      'weeks of history are on disk, not dirty pages for the next run to flush). ' +
      `After: that organization (${int(a.orgEvents)} events with its own ingest run). Each phase: ${a.ingest.senders} CloudWatch senders x ` +
      `${a.ingest.batchSize} lines for ${(a.ingest.seconds).toFixed(0)} s into the organization, then every probe ${a.probes[0]?.latencyMs.requests ?? 0} times in a row over HTTP ` +
      'with its API key (after 3 warm-up requests), one connection, latency from request to parsed body in the bench process ' +
      `(with ${a.probes[0]?.latencyMs.requests ?? 0} requests, p99 is the slowest). The organization's events are analyzed after each ingest run, as autovacuum would.`,
    '',
    `Ingest: before ${int(b.ingest.eventsPerSecond)} events/s (p50 / p99 / max ${lat(b.ingest.requestLatencyMs)}, ${b.ingest.failedRequests} failed, ` +
      `load average ${b.ingest.loadAverage} at its end), after ${int(a.ingest.eventsPerSecond)} events/s (${lat(a.ingest.requestLatencyMs)}, ${a.ingest.failedRequests} failed, ` +
      `load average ${a.ingest.loadAverage}): ${ratio(h.ingestRatio)}. One trial each: on a shared machine other work moves it.`,
    '',
    `Filter values of the filled organization: servers ${a.values.commonServer} / ${a.values.rareServer} (most / least events), tools ` +
      `${a.values.commonTool} / ${a.values.rareTool}, session ${a.values.session} (middle of the history); before: ${b.values.commonServer} / ` +
      `${b.values.rareServer}, ${b.values.commonTool} / ${b.values.rareTool}. Time ranges are relative to the newest event. The stats windows are the dashboard's aggregate (items: tool calls counted), not a page, and are not part of the filter target. Plan: one ` +
      '`EXPLAIN (ANALYZE, BUFFERS)` after the fill (`Ix` index scan, `IOS` index-only, `BmIx` bitmap; indexes without `audit_events_`).',
    '',
    `| Probe | order | before p50 / p99 | after p50 / p99 | items after | plan after | buffers | EXPLAIN ms |`,
    '|---|---|---:|---:|---:|---|---:|---:|',
  );
  for (const p of a.probes) {
    const q = b.probes.find((x) => x.name === p.name && x.order === p.order);
    const e = h.plans.find((x) => x.name === p.name && x.order === p.order);
    out.push(
      `| ${p.name}${p.failed ? ` (${p.failed} failed)` : ''} | ${p.order ?? '-'} | ${q ? pp(q.latencyMs) : 'n/a'} | ${pp(p.latencyMs)} | ${p.items} | ${e?.plan ?? ''} | ${e ? int(e.buffers) : ''} | ${e ? e.ms.toFixed(1) : ''} |`,
    );
  }
  out.push(
    '',
    `Size after the fill and vacuum (${int(size.rows)} rows in audit_events, every organization): ${mib(size.totalBytes)} + hour map ${mib(size.hoursBytes)} + contexts ${mib(size.contextsBytes ?? 0)} = ` +
      `**${int(size.bytesPerEvent)} bytes/event**; heap ${mib(size.heapBytes)} (${int(size.heapBytes / size.rows)} B/event), TOAST and maps ${mib(size.otherBytes)}, ` +
      size.indexes.map((x) => `${x.name} ${mib(x.bytes)} (${int(x.bytes / size.rows)} B/event)`).join(', ') +
      '.',
    '',
    `Retention: the filled organization set to ${rt.days} days (admin API), one pass of the job in the bench process (\`RETENTION_BATCH_ROWS\` ${int(rt.batchRows)}) ` +
      `while ${rt.senders} CloudWatch senders (${rt.batchSize} lines per request) keep posting into the same organization: ${int(rt.eventsBefore)} -> ${int(rt.eventsAfter)} events, ` +
      `${int(rt.removedEvents)} removed, ${int(rt.removedSessions)} sessions and ${int(rt.removedServers)} servers removed, in ${(rt.durationMs / 1000).toFixed(1)} s` +
      `${rt.interrupted ? ' (interrupted: lease lost)' : ''}; ${rt.deletes.count} DELETE statements (median ${ms(rt.deletes.medianMs)}, longest ${ms(rt.deletes.maxMs)}), ` +
      `${rt.seqLockTransactions.count} orphan-check transactions holding the seq lock (longest ${ms(rt.seqLockTransactions.maxMs)}, including waiting for the lock). ` +
      `Longest: ${rt.longest.map((l) => `${l.sql.trim()} ${ms(l.ms)}`).join('; ')}. ` +
      `Ingest requests of the senders: before the pass ${lat(rt.ingestCalm)} (${rt.ingestCalm.requests} requests), overlapping the pass ${lat(rt.ingestDuringPass)} ` +
      `(${rt.ingestDuringPass.requests} requests), ${rt.ingestFailed} failed.`,
    '',
    ...(h.spaceReuse
      ? [
          `Space after removal (rows are deleted, not partitions dropped): audit_events with its indexes was ${int(h.spaceReuse.bytesBeforePass / 2 ** 20)} MiB before the pass, ` +
            `${int(h.spaceReuse.bytesAfterVacuum / 2 ** 20)} MiB after it and a VACUUM (${h.spaceReuse.vacuumSeconds.toFixed(0)} s; what autovacuum does), and ` +
            `${int(h.spaceReuse.bytesAfterRefill / 2 ** 20)} MiB after ${int(h.spaceReuse.refilledEvents)} events (as many as were removed) were appended again by SQL ` +
            `in transactions of 20,000, and a VACUUM (${h.spaceReuse.refillSeconds.toFixed(0)} s)` +
            (h.spaceReuse.cycles?.length
              ? `; then, in each of ${h.spaceReuse.cycles.length} cycles, the oldest events removed (${h.spaceReuse.cycles.map((c) => int(c.removed)).join(', ')}), VACUUM, as many appended, VACUUM: ` +
                `${h.spaceReuse.cycles.map((c) => `${int(c.bytes / 2 ** 20)} MiB`).join(', ')} (heap ${h.spaceReuse.cycles.map((c) => `${int(c.heapBytes / 2 ** 20)}`).join(', ')} MiB)`
              : '') +
            `. Why the first cycle differs: docs/retention.md.`,
          '',
        ]
      : []),
    `Fill size: \`BENCH_HISTORY_EVENTS\` (${millionsOf(h.events)} in this run).`,
    '',
  );
  return out;
}

function busBackendsMarkdown(bb: BusBackendsResult): string[] {
  const name = (b: BusRound['backend']) => (b === 'redis' ? 'one Redis' : 'Redis Cluster');
  const cost = (c: BusRound['crossInstance']['broker']) =>
    `${c.publishes.toFixed(3)} publishes of ${int(c.messageBytes)} B, ${c.commands.toFixed(1)} commands (script steps included), ${int(c.bytesIn)} B in + ${int(c.bytesOut)} B out, ${int(c.replicationBytes)} B to replicas, ${c.cpuMicroseconds.toFixed(1)} us of Redis CPU; ${c.usecPerPublish.toFixed(1)} us per publish, ${c.scriptsPerEvent.toFixed(2)} counter scripts per event at ${c.usecPerScript.toFixed(1)} us`;
  const out = [
    '### Bus backends: one Redis and a Redis Cluster',
    '',
    `The cross-instance and fan-out cases on brokers of the scenario's own, in turn: a private \`redis-server\`, then a private Redis Cluster ` +
      '(three masters with one replica each, made by `redis-cli --cluster create`; the service with `REDIS_CLUSTER_NODES`, sharded pub/sub), then the ' +
      `cluster again and one Redis again (${bb.rounds.map((r) => name(r.backend)).join(', ')}). Cross-instance: two service processes, ${bb.cross.clientsPerInstance} clients on each, ` +
      `${bb.cross.rate} events/s posted to A as batches of ${bb.cross.batch} for ${bb.cross.durationMs / 1000} s. Fan-out: one process, ${bb.fanout.clients} clients of one organization, ` +
      `batches of ${bb.fanout.batch} posted as fast as taken (${bb.fanout.inFlight} in flight) for ${bb.fanout.durationMs / 1000} s. Broker figures are Redis's own counters ` +
      '(INFO stats, cpu, commandstats) summed over every node, from the first publish until every client had the last event, divided by the events published; ' +
      "they include the anomaly detector's counting scripts, which run for every tool call whatever the alert threshold.",
    '',
    '| Round | Broker | cross-instance: other instance p50 / p99 / max | same instance p50 / p99 | deliveries per service CPU s | broker cost per event (cross-instance) | fan-out deliveries/s | per service CPU s | fan-out p50 / p99 | broker cost per event (fan-out) |',
    '|---|---|---|---|---:|---|---:|---:|---|---|',
  ];
  for (const [k, r] of bb.rounds.entries()) {
    const x = r.crossInstance;
    const f = r.fanout;
    out.push(
      `| ${k + 1} | ${name(r.backend)} (${r.nodes} node${r.nodes > 1 ? 's' : ''}) | ${ms(x.other.p50)} / ${ms(x.other.p99)} / ${ms(x.other.max)} | ${ms(x.same.p50)} / ${ms(x.same.p99)} | ${int(x.deliveriesPerCpuSecond)} (${x.cpuMicrosecondsPerWrite.toFixed(1)} us per write of ${int(x.eventsPerBatch)} events) | ${cost(x.broker)} | ` +
        `${int(f.deliveriesPerSecond)} | ${int(f.deliveriesPerCpuSecond)} (${f.cpuMicrosecondsPerWrite.toFixed(1)} us per write of ${int(f.eventsPerBatch)} events) | ${ms(f.latency.p50)} / ${ms(f.latency.p99)} | ${cost(f.broker)} |`,
    );
  }
  out.push('');
  return out;
}

export function resultsMarkdown(r: BenchResults): string {
  const { ingest: i, otlp: o, fanout: f, fanoutResume: fr, crossInstance: x, busBackends: bb, postgresCost: pc, connections: c, history: h } = r.scenarios;
  const out: string[] = [];
  out.push('# Benchmark results', '');
  out.push(`Written by \`npm run bench\` on ${r.machine.date} in ${Math.round(r.totalSeconds)} s.`, '');
  out.push(`Machine: ${machineLine(r)}.`, '');
  out.push(
    `Service: \`${r.server.command}\` (${r.server.mode === 'dist' ? 'compiled by `npm run build`' : 'from source through tsx: the build failed'}), one process per instance, ` +
      'real Postgres and Redis, a fresh database per scenario, default settings (`LOG_LEVEL=info`, `PG_POOL_MAX=10`) except ' +
      '`ANOMALY_MIN_RATE=1000000000` (no alerts) and stream limits raised to 20,000. Load generators are separate Node processes on loopback.',
    '',
  );
  out.push(markdownTable(tableRows(r)), '');
  out.push('## Targets', '');
  for (const t of r.targets) out.push(`- ${t.pass === null ? 'not run' : t.pass ? 'PASS' : 'FAIL'}: ${t.name} ${t.value} (target ${t.target})`);
  out.push('');
  if (Object.keys(r.errors).length) {
    out.push('## Errors', '');
    for (const [k, v] of Object.entries(r.errors)) out.push(`- ${k}: ${v.split('\n')[0]}`);
    out.push('');
  }
  out.push('## Details', '');
  if (i) {
    out.push(
      '### Ingest',
      '',
      `${i.senders} sender processes each post awslogs deliveries (a CloudWatch Logs subscription payload of ${i.batchSize} Lambda log lines with CloudWatch event ids, gzip + base64, each body sent once; START/END/REPORT platform lines around ` +
        'tool-call lines in four shapes: Node.js prefix + Powertools JSON, Lambda JSON log format, Node.js prefix + logfmt, Python prefix + logfmt; ' +
        `UUID request ids, X-Ray trace ids, agent sessions of 20-60 calls) back to back, one request in flight each, for ${i.seconds.toFixed(1)} s. ` +
        `${int(i.requests)} requests (${i.failedRequests} failed), ${int(i.eventsStored)} events stored (counted in the database): ${int(i.eventsPerSecond)} events/s. ` +
        `Request p50 / p99 / max: ${ms(i.requestLatencyMs.p50)} / ${ms(i.requestLatencyMs.p99)} / ${ms(i.requestLatencyMs.max)}. ` +
        `CPU per 1,000 events: service ${i.cpuMsPer1000Events.service.toFixed(0)} ms, its Postgres backends ${i.cpuMsPer1000Events.postgres.toFixed(0)} ms` +
        (i.cores ? `, the sender processes ${i.cpuMsPer1000Events.senders.toFixed(0)} ms. Cores during the run (of ${i.cores.total.toFixed(1)}): service ${i.cores.service.toFixed(2)}, ` +
          `Postgres backends ${i.cores.postgres.toFixed(2)}, senders ${i.cores.senders.toFixed(2)}, the rest of the machine ${i.cores.otherBusy.toFixed(2)}, idle ${i.cores.idle.toFixed(2)}.` : '.'),
      '',
      `Baseline: the same ${int(i.copy.rows)} stored rows, exported and written again with \`psql \\copy ... FROM\` (a true COPY) into ` +
        `${i.copy.into === 'clone' ? 'an empty clone of the table with the same indexes' : 'the same table for another organization'} in ${i.copy.seconds.toFixed(1)} s: ${int(i.copy.rowsPerSecond)} rows/s. Ratio ${ratio(i.ratioToCopy)}. ` +
        `All of Postgres's CPU (the database's backends and the cluster's background processes, after a CHECKPOINT on each side): ${i.cpuMsPer1000Events.postgres.toFixed(1)} ms per 1,000 events against COPY's ${i.copy.postgresCpuMsPer1000Rows.toFixed(1)} ms per 1,000 rows (${ratio(i.postgresCpuToCopy)}).`,
      '',
      `Figures of the median of ${i.trials.length} trials (by ratio; each trial a fresh database and service process): ` +
        i.trials.map((t) => `${t.sink ? `${t.sink} sink: ` : ''}${int(t.eventsPerSecond)} events/s vs COPY ${int(t.copyRowsPerSecond)} rows/s = ${ratio(t.ratioToCopy)}${t.cpuMsPer1000Events ? ` (CPU per 1,000 events: service ${t.cpuMsPer1000Events.service.toFixed(0)} ms, Postgres ${t.cpuMsPer1000Events.postgres.toFixed(0)} ms${t.copyPostgresCpuMsPer1000Rows ? ` against COPY's ${t.copyPostgresCpuMsPer1000Rows.toFixed(0)}` : ''}${t.cpuMsPer1000Events.senders !== undefined ? `, senders ${t.cpuMsPer1000Events.senders.toFixed(0)} ms` : ''})` : ''}`).join('; ') +
        '.',
      '',
    );
  }
  if (o) {
    out.push(
      '### OTLP',
      '',
      `The same tool calls (the stream benchmarks' generator), sent by ${o.senders} sender processes, one request in flight each, first as raw JSON arrays ` +
        `to \`/api/v1/ingest/events\` for ${o.raw.seconds.toFixed(1)} s, then as OTLP protobuf trace exports (one MCP server span per call, one resource per server) ` +
        `to \`/api/v1/ingest/otlp/v1/traces\` for ${o.otlp.seconds.toFixed(1)} s, ${o.batchSize} calls per request, same service process and database. ` +
        `OTLP: ${int(o.otlp.eventsStored)} spans stored, ${int(o.otlp.eventsPerSecond)}/s, ${o.otlp.bytesPerEvent.toFixed(0)} bytes per span sent, request p50 / p99 / max ` +
        `${ms(o.otlp.requestLatencyMs.p50)} / ${ms(o.otlp.requestLatencyMs.p99)} / ${ms(o.otlp.requestLatencyMs.max)}. ` +
        `Raw JSON: ${int(o.raw.eventsStored)} events stored, ${int(o.raw.eventsPerSecond)}/s, ${o.raw.bytesPerEvent.toFixed(0)} bytes per event, request p50 / p99 / max ` +
        `${ms(o.raw.requestLatencyMs.p50)} / ${ms(o.raw.requestLatencyMs.p99)} / ${ms(o.raw.requestLatencyMs.max)}. Ratio ${ratio(o.ratioToRaw)}. ` +
        'A stored span keeps more metadata (trace and span ids, span name and kind, status, attributes, resource, scope) than the raw event.',
      '',
    );
  }
  if (f) {
    const sv = f.service.groups.service;
    const bg = f.bare.groups.bare;
    out.push(
      '### Fan-out',
      '',
      `${f.clients} SSE clients of one organization in a separate process (raw \`node:http\`, frames counted by seq). A publisher process posts raw batches of ` +
        `${f.batchSize} tool calls with 4 requests in flight for ${f.service.publishSeconds.toFixed(1)} s, after a warm-up of 40 batches. ` +
        `Service: ${int(f.service.eventsPublished)} events published (${int(f.service.eventsPerSecond)}/s), ${int(sv.deliveries)} deliveries to ${sv.connected} clients ` +
        `(${sv.closed} cut), ${int(sv.deliveriesPerSecond)} deliveries/s until the last client had the last event; latency after the ingest response ` +
        `p50 / p99 / max ${ms(sv.latencyAfterResponseMs.p50)} / ${ms(sv.latencyAfterResponseMs.p99)} / ${ms(sv.latencyAfterResponseMs.max)}, after the request was sent ` +
        `${ms(sv.latencyAfterSendMs.p50)} / ${ms(sv.latencyAfterSendMs.p99)}.`,
      '',
      `Baseline: a bare \`node:http\` SSE server (bench/workloads/bare-sse-server.ts) that frames the same posted batches into the same bytes and writes each batch once ` +
        `per client, same clients, same publisher: ${int(f.bare.eventsPublished)} events (${int(f.bare.eventsPerSecond)}/s), ${int(bg.deliveriesPerSecond)} deliveries/s, ` +
        `latency after response p50 / p99 ${ms(bg.latencyAfterResponseMs.p50)} / ${ms(bg.latencyAfterResponseMs.p99)}. Ratio ${ratio(f.ratioToBare)}.`,
      '',
      `Figures of the median of ${f.trials.length} trials (by ratio; each trial a fresh database, service and baseline process): ` +
        f.trials.map((t) => `${(t.serviceDeliveriesPerSecond / 1e6).toFixed(2)} M vs ${(t.bareDeliveriesPerSecond / 1e6).toFixed(2)} M = ${ratio(t.ratioToBare)}`).join('; ') +
        '.',
      '',
    );
  }
  if (fr) {
    const sv = fr.service.groups.service;
    const bg = fr.bare.groups.bare;
    out.push(
      '### Fan-out with resuming clients',
      '',
      `${fr.clients} SSE clients of one organization in a separate process that resume as EventSource does: when the server ends a stream, the client ` +
        'opens it again after the `retry:` delay with `Last-Event-ID` set to its last complete event, and every id it receives is checked to be the one ' +
        `after the previous. A publisher posts a burst of ${int(fr.events)} tool calls in batches of ${fr.batchSize}, 4 requests in flight, after a warm-up of 40 batches. ` +
        `Service (default \`SSE_BUFFER_LIMIT_BYTES\`, 1 MiB): ${sv.resumes!.cuts} streams cut (${sv.resumes!.clientsCut} clients), ${sv.resumes!.reachedLast} clients got the last event, ` +
        `${sv.resumes!.inOrder} got every id once in order (${sv.resumes!.repeats} repeats, ${sv.resumes!.gaps} gaps); the last client had the last event after ` +
        `${sv.deliverySeconds.toFixed(1)} s (${int(sv.deliveriesPerSecond)} deliveries/s); latency after the ingest response p50 / p99 / max ` +
        `${ms(sv.latencyAfterResponseMs.p50)} / ${ms(sv.latencyAfterResponseMs.p99)} / ${ms(sv.latencyAfterResponseMs.max)}.`,
      '',
      `Baseline: the bare \`node:http\` SSE server (never cuts a client), same clients and publisher: ${bg.deliverySeconds.toFixed(1)} s (${int(bg.deliveriesPerSecond)} deliveries/s), ` +
        `p50 / p99 / max ${ms(bg.latencyAfterResponseMs.p50)} / ${ms(bg.latencyAfterResponseMs.p99)} / ${ms(bg.latencyAfterResponseMs.max)}. Ratio ${ratio(fr.ratioToBare)}, p99 ${ratio(fr.p99RatioToBare)} of bare's.`,
      '',
      `Every trial (by ratio; each a fresh database, service and baseline process): ` +
        fr.trials
          .map((t) => `${ratio(t.ratioToBare)} (${t.serviceSeconds.toFixed(1)} s vs ${t.bareSeconds.toFixed(1)} s; p99 ${ms(t.serviceP99Ms)} vs ${ms(t.bareP99Ms)}; ${t.cuts} cuts of ${t.clientsCut} clients; ${t.complete} complete, ${t.inOrder} in order)`)
          .join('; ') +
        '.',
      '',
    );
  }
  if (x) {
    const o = x.run.groups.other;
    const s = x.run.groups.same;
    out.push(
      '### Cross-instance latency',
      '',
      `Two service processes on the same database and Redis, ${x.clientsPerInstance} clients on each; ${x.eventsPerSecond} events/s posted to instance A ` +
        `as batches of ${x.batchSize} every ${(1000 * x.batchSize) / x.eventsPerSecond} ms for ${x.run.publishSeconds.toFixed(1)} s ` +
        `(${x.run.failedRequests} failed requests; ingest request p50 / p99 ${ms(x.run.requestLatencyMs.p50)} / ${ms(x.run.requestLatencyMs.p99)}). ` +
        `From the ingest response to receipt by a client of instance B (through Redis): p50 / p99 / max ${ms(o.latencyAfterResponseMs.p50)} / ` +
        `${ms(o.latencyAfterResponseMs.p99)} / ${ms(o.latencyAfterResponseMs.max)} over ${int(o.deliveries)} deliveries; clients of A itself: ` +
        `${ms(s.latencyAfterResponseMs.p50)} / ${ms(s.latencyAfterResponseMs.p99)} / ${ms(s.latencyAfterResponseMs.max)}. ` +
        `From the request being sent (includes the commit): B ${ms(o.latencyAfterSendMs.p50)} / ${ms(o.latencyAfterSendMs.p99)}.`,
      '',
      `Figures of the median of ${x.trials.length} trials (by p99 on B; same two processes, a new organization each): p50 / p99 / max on B ` +
        x.trials.map((t) => `${ms(t.p50)} / ${ms(t.p99)} / ${ms(t.max)}`).join('; ') +
        '.',
      '',
    );
  }
  if (bb) out.push(...busBackendsMarkdown(bb));
  if (pc) {
    out.push(
      '### Postgres cost per event',
      '',
      `The ingest workload (4 senders x 500-line CloudWatch batches, ${pc.seconds.toFixed(1)} s) into a Postgres ${pc.postgresVersion} cluster of the scenario's own ` +
        '(initdb, default settings, a spare port), so that everything it spends is the service\'s. ' +
        `${int(pc.eventsStored)} events stored (${int(pc.eventsPerSecond)}/s). Per 1,000 events: CPU of every Postgres process (backends, WAL writer, ` +
        `checkpointer, autovacuum, the postmaster's reaped children; a CHECKPOINT at the end included) ${pc.postgresCpuMsPer1000.toFixed(1)} ms, the service ` +
        `${pc.serviceCpuMsPer1000.toFixed(1)} ms. WAL ${int(pc.walBytesPerEvent)} B per event; ` +
        `the database grew by ${int(pc.databaseBytesPerEvent)} B per event from empty (the history scenario measures it at millions of events).`,
      '',
    );
  }
  if (c) {
    out.push(
      '### Connections',
      '',
      `${int(c.service.connections)} idle SSE streams (target ${int(c.target)}; open-files limit of the server ${int(c.fdLimit)}) from 4 client processes, ` +
        'each on its own source address (127.0.0.2-5). Resident memory (VmRSS, median of 5 samples) of the server process before and after, after a warm-up of 20 streams: ' +
        `service ${c.service.rssBeforeMb.toFixed(0)} -> ${c.service.rssAfterMb.toFixed(0)} MB = ${c.service.kbPerConnection.toFixed(1)} KB per stream; ` +
        `bare node:http ${c.bare.rssBeforeMb.toFixed(0)} -> ${c.bare.rssAfterMb.toFixed(0)} MB = ${c.bare.kbPerConnection.toFixed(1)} KB per stream. Ratio ${ratio(c.ratioToBare)}.`,
      '',
    );
  }
  if (h) out.push(...historyMarkdown(h));
  out.push('### Time and load', '');
  for (const [k, t] of Object.entries(r.timings)) out.push(`- ${k}: ${t.seconds.toFixed(0)} s, 1-minute load average ${t.loadBefore} before, ${t.loadAfter} after`);
  out.push(
    '',
    'The machine is shared; other work running at the same time lowers throughput and raises tail latency. Latencies are measured across processes with ' +
      'the monotonic clock (`process.hrtime`), from the publisher receiving the ingest response to the client process reading the batch; a negative value ' +
      'means the batch reached the client before the publisher had its response.',
    '',
  );
  return out.join('\n');
}
