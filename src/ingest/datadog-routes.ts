// POST /api/v1/ingest/datadog: one Datadog webhook event (spec body, default template, custom templates; JSON or form).
import type { FastifyInstance } from 'fastify';
import type { NewAuditEvent } from '../audit/audit-types.js';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { zodIssues } from '../http/error-handler.js';
import { BadRequestError } from '../http/errors.js';
import { decodeContentEncoding } from './body-decoding.js';
import { DATADOG_KNOWN_KEYS, datadogBodySchema, type DatadogBody } from './datadog-schemas.js';
import { entryDedupeKey, idempotencyClaim, idempotencyKeyOf } from './entry-identity.js';
import { ingest, type IngestDeps } from './ingest-result.js';
import { ingestRouteSchema } from './ingest-route-schema.js';
import { installLogBodyParsers, requireContentType, textBodyAsJson } from './log-body-parsers.js';
import { normalizeDatadog, parseTimestamp } from './normalize/index.js';
import { toAuditEvent } from './to-audit-event.js';

const ACCEPTED_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'text/plain'];

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
export function datadogEvent(raw: Record<string, unknown>, d: DatadogBody, receivedAt: Date, idempotencyKey: string | null = null): NewAuditEvent {
  const body = d.body ?? d.text ?? null;
  const n = normalizeDatadog({ title: d.title ?? null, body, tags: d.tags ?? null });
  const id = present(d.id) ? d.id : null;
  const dedupeKey = entryDedupeKey('dd', id !== null ? `dd:${id}` : null, idempotencyKey, 0);
  const org = typeof d.org === 'object' && d.org !== null ? { id: d.org.id ?? undefined, name: d.org.name ?? undefined } : (d.org ?? undefined);
  return toAuditEvent(n, {
    source: 'datadog',
    sourceDetail: n.service,
    timestamp: datadogTimestamp(d),
    receivedAt,
    message: body,
    dedupeKey,
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

export function registerDatadogRoutes(app: FastifyInstance, deps: IngestDeps & { auth: Authenticator }) {
  void app.register(async (scope) => {
    installLogBodyParsers(scope, { binary: false });
    scope.post(
      '/api/v1/ingest/datadog',
      {
        onRequest: [deps.auth.require({ scope: 'ingest:write', cookie: false }), requireContentType(ACCEPTED_TYPES)],
        preParsing: decodeContentEncoding,
        schema: ingestRouteSchema('Datadog webhook (JSON or form encoded); optional Idempotency-Key header', ACCEPTED_TYPES),
      },
      async (request) => {
        const auth = authOf(request);
        const idempotencyKey = idempotencyKeyOf(request);
        const raw = textBodyAsJson(request);
        if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
          throw new BadRequestError('body must be one Datadog webhook event as a JSON object or form fields', [{ path: '(root)', message: 'expected an object' }]);
        }
        const parsed = datadogBodySchema.safeParse(raw);
        if (!parsed.success) throw new BadRequestError('body is not a Datadog webhook event; nothing was stored', zodIssues(parsed.error));
        const d = parsed.data;
        if (![d.title, d.body, d.text, d.id].some(present) && !(d.tags && d.tags.length)) {
          throw new BadRequestError('the event has no title, body, tags or id; check the webhook payload template', [{ path: '(root)', message: 'needs at least one of title, body, tags, id' }]);
        }
        const event = datadogEvent(raw as Record<string, unknown>, d, new Date(), idempotencyKey);
        return ingest(deps, auth.orgId, 'datadog', [event], idempotencyClaim(idempotencyKey, 'datadog', raw));
      },
    );
  });
}
