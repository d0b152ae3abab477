// Storing the events of one ingest request, once for every source: one transaction (or bounded chunks), metrics by outcome.
import type { NewAuditEvent } from '../audit/audit-types.js';
import type { AuditSource } from '../contract/event-sources.js';
import type { IdempotencyClaim } from '../audit/ingest-requests-repo.js';
import type { EventLog } from '../audit/event-log/event-log.js';
import type { Metrics } from '../metrics/metrics.js';
import { TooLarge } from '../shared/domain-errors.js';
import { boundEvents, type EventCostBound } from '../shared/event-cost.js';

export interface StoreDeps {
  eventLog: EventLog;
  metrics: Metrics;
  maxEntries: number;
  /** INGEST_MAX_EVENT_BYTES: what one stored event may cost, applied here to every source's events (boundEvent). */
  eventCost: EventCostBound;
}

/** A TooLarge error when a request holds more entries than INGEST_MAX_ENTRIES. */
export function checkEntryCount(count: number, max: number): void {
  if (count > max) throw new TooLarge(`${count} entries in one request; the limit is ${max} (INGEST_MAX_ENTRIES)`);
}

async function storeOnce(deps: StoreDeps, orgId: string, source: AuditSource, events: NewAuditEvent[], idempotency?: IdempotencyClaim) {
  checkEntryCount(events.length, deps.maxEntries);
  // Request time is observed for the whole request (the plugin's onResponse); stored and published events after every commit.
  const r = await deps.eventLog.append(orgId, events, { idempotency });
  if (r.replayed) deps.metrics.ingestEvents.inc({ source, outcome: 'duplicate' }, events.length);
  else {
    deps.metrics.ingestEvents.inc({ source, outcome: 'stored' }, r.accepted);
    if (r.duplicates) deps.metrics.ingestEvents.inc({ source, outcome: 'duplicate' }, r.duplicates);
  }
  return { accepted: r.accepted, duplicates: r.duplicates };
}

/**
 * Stores the events whole in one transaction (with an Idempotency-Key claim, a retried request answers its first
 * counts); `chunked`: in transactions of at most maxEntries each, for sources whose every key is deterministic.
 */
export async function storeEvents(
  deps: StoreDeps,
  orgId: string,
  source: AuditSource,
  events: NewAuditEvent[],
  opts: { idempotency?: IdempotencyClaim; chunked?: boolean } = {},
): Promise<{ accepted: number; duplicates: number }> {
  // The one bound on what an event may cost, whatever source (or route: HTTP, gRPC) made it.
  events = boundEvents(events, deps.eventCost);
  if (!opts.chunked) return storeOnce(deps, orgId, source, events, opts.idempotency);
  let accepted = 0;
  let duplicates = 0;
  for (let i = 0; i < events.length; i += deps.maxEntries) {
    const r = await storeOnce(deps, orgId, source, events.slice(i, i + deps.maxEntries));
    accepted += r.accepted;
    duplicates += r.duplicates;
  }
  return { accepted, duplicates };
}
