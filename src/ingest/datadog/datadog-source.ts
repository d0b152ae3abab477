// Source `datadog` (POST /api/v1/ingest/datadog): one Datadog webhook event (spec body, default and custom templates; JSON or form).
import type { NewAuditEvent } from '../../audit/audit-types.js';
import { InvalidInput } from '../../shared/domain-errors.js';
import { zodIssues } from '../../shared/zod-issues.js';
import { dedupeKey, ownIdentity } from '../dedupe-key.js';
import type { IngestSource } from '../ingest-source.js';
import { normalizeDatadog, parseTimestamp } from '../normalize/index.js';
import type { Recognizer } from '../recognition/recognizer.js';
import { toAuditEvent } from '../to-audit-event.js';
import { DATADOG_KNOWN_KEYS, datadogBodySchema, type DatadogBody } from './datadog-schemas.js';

function present(v: string | number | null | undefined): v is string | number {
  return v !== null && v !== undefined && v !== '';
}

/** Event time: timestamp, else last_updated, else date (the first that parses); null lets the message or now decide. */
export function datadogTimestamp(d: DatadogBody): Date | null {
  for (const v of [d.timestamp, d.last_updated, d.date]) {
    const t = present(v) ? parseTimestamp(v) : null;
    if (t) return t;
  }
  return null;
}

/** Fields of the body that the schema does not name, kept as sent. */
function extras(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const acc = Object.create(null) as Record<string, unknown>;
  let n = 0;
  for (const key of Object.keys(body)) {
    if (DATADOG_KNOWN_KEYS.has(key)) continue;
    acc[key] = body[key];
    n++;
  }
  return n ? { ...acc } : undefined;
}

/** The event; deduplicated only by its Datadog `id`, or the request's Idempotency-Key (position 0). */
export function datadogEvent(raw: Record<string, unknown>, d: DatadogBody, receivedAt: Date, idempotencyKey: string | null = null, recognizer?: Recognizer): NewAuditEvent {
  const body = d.body ?? d.text ?? null;
  const n = normalizeDatadog({ title: d.title ?? null, body, tags: d.tags ?? null });
  const id = present(d.id) ? d.id : null;
  const key = dedupeKey('dd', id !== null ? ownIdentity.datadog(id) : null, idempotencyKey, 0);
  const org = typeof d.org === 'object' && d.org !== null ? { id: d.org.id ?? undefined, name: d.org.name ?? undefined } : (d.org ?? undefined);
  return toAuditEvent(n, {
    source: 'datadog',
    sourceDetail: n.service,
    timestamp: datadogTimestamp(d),
    receivedAt,
    message: body,
    dedupeKey: key,
    recognizer,
    name: d.title ?? null,
    metadata: {
      payloadFormat: 'datadog',
      datadog: {
        id: id ?? undefined,
        title: d.title ?? undefined,
        eventType: d.type ?? d.event_type ?? undefined,
        tags: n.tags,
        rawTags: d.tags ?? undefined,
        timestamp: d.timestamp ?? undefined,
        lastUpdated: d.last_updated ?? undefined,
        date: d.date ?? undefined,
        org,
        alertTransition: d.alert_transition ?? undefined,
        alertId: d.alert_id ?? undefined,
        hostname: d.hostname ?? undefined,
        priority: d.priority ?? undefined,
        link: d.link ?? undefined,
        extra: extras(raw),
      },
    },
  });
}

/** The event of one webhook body (already parsed from JSON or form fields); InvalidInput when it is not a Datadog event. */
export function datadogEvents(raw: unknown, receivedAt: Date, idempotencyKey: string | null, recognizer?: Recognizer): NewAuditEvent[] {
  const parsed = datadogBodySchema.safeParse(raw);
  if (!parsed.success) throw new InvalidInput('body is not one Datadog webhook event (a JSON object or form fields; check the webhook payload template); nothing was stored', zodIssues(parsed.error));
  return [datadogEvent(raw as Record<string, unknown>, parsed.data, receivedAt, idempotencyKey, recognizer)];
}

export function datadogSource(): IngestSource {
  return {
    name: 'datadog',
    paths: ['/datadog'],
    summary: 'Datadog webhook (JSON or form encoded); optional Idempotency-Key header',
    // JSON keeps Datadog's big event ids exact; custom templates may post form fields or JSON as text/plain.
    accepts: { 'application/json': 'exact-json', 'application/x-www-form-urlencoded': 'form', 'text/plain': 'exact-json' },
    idempotency: { claim: 'datadog' },
    documentedBody: datadogBodySchema,
    toEvents: (body, ctx) => ({ events: datadogEvents(body, ctx.receivedAt, ctx.idempotencyKey, ctx.recognizer) }),
  };
}
