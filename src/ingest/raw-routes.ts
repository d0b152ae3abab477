// POST /api/v1/ingest/events: raw JSON audit events as one object, an array, or NDJSON.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { NewAuditEvent } from '../audit/audit-types.js';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { BadRequestError, type IssueDetail } from '../http/errors.js';
import { decodeContentEncoding } from './body-decoding.js';
import { entryDedupeKey, idempotencyClaim, idempotencyKeyOf } from './entry-identity.js';
import { checkEntryCount, ingest, type IngestDeps } from './ingest-result.js';
import { ingestRouteSchema } from './ingest-route-schema.js';
import { rawEventSchema, type RawEvent } from './raw-schemas.js';

/** Splits an NDJSON body into parsed values; blank lines are skipped; a bad line is a 400 naming it. */
export function parseNdjson(text: string, maxEntries: number): unknown[] {
  const out: unknown[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    checkEntryCount(out.length + 1, maxEntries);
    try {
      out.push(JSON.parse(line));
    } catch (err) {
      throw new BadRequestError('body is not valid NDJSON', [{ path: `line ${i + 1}`, message: (err as Error).message }]);
    }
  }
  return out;
}

/** The stored event of the raw event at `index`; deduplicated only by its `id`, or the request's Idempotency-Key + index. */
function toAuditEvent(e: RawEvent, index: number, receivedAt: Date, idempotencyKey: string | null): NewAuditEvent {
  const dedupeKey = entryDedupeKey('raw', e.id ? `raw:id:${e.id}` : null, idempotencyKey, index);
  return {
    type: 'tool_call',
    source: 'raw',
    occurredAt: e.timestamp ?? receivedAt,
    serverId: e.serverId,
    sessionId: e.sessionId ?? null,
    toolName: e.toolName,
    action: e.action ?? null,
    latencyMs: e.latencyMs ?? null,
    metadata: { ...(e.metadata ?? {}), ...(e.id ? { id: e.id } : {}) },
    dedupeKey,
  };
}

export function registerRawIngestRoutes(app: FastifyInstance, deps: IngestDeps & { auth: Authenticator }) {
  app.post(
    '/api/v1/ingest/events',
    {
      onRequest: deps.auth.require({ scope: 'ingest:write', cookie: false }),
      preParsing: decodeContentEncoding,
      schema: ingestRouteSchema(
        'Raw JSON audit events: one object, an array, or NDJSON. Deduplicated by `id`, or by the Idempotency-Key header + position (a retry answers the same counts; 422 when the key was used for another request)',
        ['application/json', 'application/x-ndjson'],
        { documentedBody: z.union([rawEventSchema, z.array(rawEventSchema)]) },
      ),
    },
    async (request) => {
      const auth = authOf(request);
      const idempotencyKey = idempotencyKeyOf(request);
      const ct = String(request.headers['content-type'] ?? '');
      let items: unknown[];
      if (typeof request.body === 'string') {
        if (!/ndjson|jsonl/i.test(ct)) throw new BadRequestError('send application/json or application/x-ndjson');
        items = parseNdjson(request.body, deps.maxEntries);
      } else if (Array.isArray(request.body)) {
        items = request.body;
      } else if (request.body && typeof request.body === 'object') {
        items = [request.body];
      } else {
        throw new BadRequestError('body must be a JSON object, an array of objects, or NDJSON');
      }
      checkEntryCount(items.length, deps.maxEntries);
      const issues: IssueDetail[] = [];
      const parsed: RawEvent[] = [];
      const single = !Array.isArray(request.body) && typeof request.body !== 'string';
      items.forEach((item, i) => {
        const r = rawEventSchema.safeParse(item);
        if (r.success) parsed.push(r.data);
        else
          for (const issue of r.error.issues.slice(0, 10)) {
            if (issues.length >= 50) break;
            const path = [...(single ? [] : [i]), ...issue.path].map(String).join('.');
            issues.push({ path: path || '(root)', message: issue.message });
          }
      });
      if (issues.length) throw new BadRequestError('some events are invalid; nothing was stored', issues);
      const now = new Date();
      const events = parsed.map((e, i) => toAuditEvent(e, i, now, idempotencyKey));
      return ingest(deps, auth.orgId, 'raw', events, idempotencyClaim(idempotencyKey, 'events', request.body));
    },
  );
}

