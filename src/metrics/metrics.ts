// Prometheus metrics of one app instance, on a registry of its own (prom-client).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { AUDIT_EVENT_TYPES } from '../audit/audit-types.js';
import { AUDIT_SOURCES } from '../contract/event-sources.js';

/**
 * A label value from a fixed set: `value` when it is one of `allowed`, else "other". Every label of every metric is
 * bounded, so no request (or stored value) can create new series.
 */
export function boundedLabel(value: string | undefined, allowed: readonly string[]): string {
  return value !== undefined && allowed.includes(value) ? value : 'other';
}

/** Labels of stored events: source and type from fixed sets. */
export function storedEventLabels(source: string, type: string): { source: string; type: string } {
  return { source: boundedLabel(source, AUDIT_SOURCES), type: boundedLabel(type, AUDIT_EVENT_TYPES) };
}

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const r = [registry];
  const metrics = {
    registry,
    streamsOpen: new Gauge({ name: 'audit_stream_sse_streams_open', help: 'SSE streams open on this instance', registers: r }),
    streamOrgs: new Gauge({ name: 'audit_stream_sse_organizations', help: 'Organizations with at least one open stream on this instance', registers: r }),
    streamsRejected: new Counter({ name: 'audit_stream_sse_streams_rejected_total', help: 'Stream requests refused by a connection limit', labelNames: ['limit'], registers: r }),
    streamsClosed: new Counter({ name: 'audit_stream_sse_streams_closed_total', help: 'Streams closed, by reason', labelNames: ['reason'], registers: r }),
    slowClientDisconnects: new Counter({ name: 'audit_stream_sse_slow_client_disconnects_total', help: 'Streams cut because the client did not keep up', registers: r }),
    eventsDelivered: new Counter({ name: 'audit_stream_sse_events_delivered_total', help: 'Events written to SSE streams (events x clients)', registers: r }),
    eventsReplayed: new Counter({
      name: 'audit_stream_sse_events_replayed_total',
      help: 'Events sent to resuming streams before they go live, by where they came from: memory (the recent window) or database',
      labelNames: ['from'],
      registers: r,
    }),
    resumes: new Counter({
      name: 'audit_stream_sse_resumes_total',
      help: 'Streams resuming after an id (Last-Event-ID), by where their replay started: memory (the recent window) or database (a resume that outran the window and went on from the database counts once more as database)',
      labelNames: ['from'],
      registers: r,
    }),
    recentWindowBytes: new Gauge({ name: 'audit_stream_sse_recent_window_bytes', help: 'Bytes of recently delivered frames kept for resumes, summed over the organizations with streams on this instance', registers: r }),
    ingestEvents: new Counter({ name: 'audit_stream_ingest_events_total', help: 'Entries received by ingest endpoints, by source and outcome (stored, duplicate; empty: entries that carry nothing, such as Firehose records with no data or OTLP log records with no body, attributes or name; not_tool_call: OTLP spans that are not tool calls; not_stored: other entries a source accepts and does not store)', labelNames: ['source', 'outcome'], registers: r }),
    eventsStored: new Counter({ name: 'audit_stream_events_stored_total', help: 'Audit events committed to the database, by source and type (ingested entries, session updates, anomalies)', labelNames: ['source', 'type'], registers: r }),
    ingestRequests: new Counter({ name: 'audit_stream_ingest_requests_total', help: 'Ingest requests by source and status code', labelNames: ['source', 'status'], registers: r }),
    ingestDuration: new Histogram({
      name: 'audit_stream_ingest_duration_seconds',
      help: 'Time to answer an ingest request (parse, normalize, store, publish), by source',
      labelNames: ['source'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: r,
    }),
    writeTransactions: new Counter({ name: 'audit_stream_write_transactions_total', help: 'Transactions that stored events of ingest requests or alerts (one per group of requests of an organization stored together)', registers: r }),
    groupedWrites: new Counter({ name: 'audit_stream_grouped_writes_total', help: 'Ingest requests handed to one transaction together with at least one other request of their organization (group commit)', registers: r }),
    eventsPublished: new Counter({ name: 'audit_stream_bus_events_published_total', help: 'Stream events published to the bus after commit (every source)', registers: r }),
    busReconnects: new Counter({ name: 'audit_stream_bus_reconnects_total', help: 'Bus subscriber reconnections', registers: r }),
    orgReadWaits: new Counter({ name: 'audit_stream_org_read_waits_total', help: 'Database reads that waited for one of their organization\'s read slots (ORG_READ_SLOTS)', registers: r }),
    orgReadRefusals: new Counter({ name: 'audit_stream_org_read_refusals_total', help: 'Requests refused (429) because their organization\'s read queue was full (ORG_READ_QUEUE_MAX)', registers: r }),
    pagesCutByBytes: new Counter({ name: 'audit_stream_read_pages_cut_by_bytes_total', help: 'Pages of stored events (listing, export, replay, gap fill) ended early by READ_PAGE_MAX_BYTES', registers: r }),
    replicaReads: new Counter({ name: 'audit_stream_replica_reads_total', help: 'Lag-tolerant reads (listing, counts, stats, exports, replay pages) by where they went: the replica (DATABASE_READ_URL) or the primary', labelNames: ['to'], registers: r }),
    replicaLagSeconds: new Gauge({ name: 'audit_stream_replica_lag_seconds', help: 'Bound on how far the replica (DATABASE_READ_URL) lags the primary, as last measured; -1 while unknown', registers: r }),
    gapFills: new Counter({ name: 'audit_stream_gap_fills_total', help: 'Seq gaps filled from the database', registers: r }),
    gapFilledEvents: new Counter({ name: 'audit_stream_gap_filled_events_total', help: 'Events read from the database to fill gaps', registers: r }),
    anomalies: new Counter({ name: 'audit_stream_anomalies_total', help: 'Anomaly alerts emitted by this instance', labelNames: ['anomaly_type'], registers: r }),
  };
  // The fixed label sets exist from the start (a scrape shows both sources at 0 before the first resume).
  for (const from of RESUME_SOURCES) {
    metrics.resumes.inc({ from }, 0);
    metrics.eventsReplayed.inc({ from }, 0);
  }
  for (const to of ['replica', 'primary']) metrics.replicaReads.inc({ to }, 0);
  return metrics;
}

/** Where a resuming stream's events come from: the recent window of delivered frames, or the database. */
export const RESUME_SOURCES = ['memory', 'database'] as const;

export type Metrics = ReturnType<typeof createMetrics>;
