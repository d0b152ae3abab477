// Shared tail of every ingest route: store through the recorder, count metrics, and answer {accepted, duplicates}.
import type { NewAuditEvent, AuditSource } from '../audit/audit-types.js';
import type { IdempotencyClaim } from '../audit/ingest-requests-repo.js';
import type { EventRecorder } from '../audit/record-events.js';
import type { Metrics } from '../metrics/metrics.js';
import { PayloadTooLargeError } from '../http/errors.js';

export interface IngestDeps {
  recorder: EventRecorder;
  metrics: Metrics;
  maxEntries: number;
}

export function checkEntryCount(count: number, max: number): void {
  if (count > max) throw new PayloadTooLargeError(`${count} entries in one request; the limit is ${max} (INGEST_MAX_ENTRIES)`);
}

/** Stores the events in one transaction; with an Idempotency-Key claim, a retried request answers its first counts. */
export async function ingest(deps: IngestDeps, orgId: string, source: AuditSource, events: NewAuditEvent[], idempotency?: IdempotencyClaim): Promise<{ accepted: number; duplicates: number }> {
  checkEntryCount(events.length, deps.maxEntries);
  // Request time is observed for the whole request (app.ts onResponse); stored and published events after every commit.
  const r = await deps.recorder.recordEvents(orgId, events, { idempotency });
  if (r.replayed) deps.metrics.ingestEvents.inc({ source, outcome: 'duplicate' }, events.length);
  else {
    deps.metrics.ingestEvents.inc({ source, outcome: 'stored' }, r.accepted);
    if (r.duplicates) deps.metrics.ingestEvents.inc({ source, outcome: 'duplicate' }, r.duplicates);
  }
  return { accepted: r.accepted, duplicates: r.duplicates };
}
