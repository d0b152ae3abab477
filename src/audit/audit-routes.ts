// GET /api/v1/audit-events and /count: the organization's stored audit events, filtered, with cursor paging by seq, and how many match.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { auditEventCountSchema, auditEventPageSchema } from '../contract/api-rows.js';
import type { Db } from '../db/db.js';
import type { OrgReadSlots } from '../db/org-read-slots.js';
import type { ReadReplica } from '../db/read-replica.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { countAuditEvents, listAuditEvents } from './audit-repo.js';
import { AUDIT_SOURCES } from '../contract/event-sources.js';
import { AUDIT_EVENT_TYPES } from './audit-types.js';
import { checkFreeText, FREE_TEXT_MAX_LENGTH } from './event-filters.js';
import { readWithTimeout } from './query-timeout.js';
import { listPage } from './replica-listing.js';

const text = z.string().min(1).max(200);
const time = z
  .string()
  .max(64)
  .transform((s, ctx) => {
    const d = /^\d+$/.test(s) ? new Date(Number(s)) : new Date(s);
    if (Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1970 || d.getUTCFullYear() > 9999) {
      ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 timestamp or epoch milliseconds' });
      return z.NEVER;
    }
    return d;
  });

/** The filters of stored events (listing, count, export). */
export const eventFilterFields = {
  type: z.enum(AUDIT_EVENT_TYPES).optional(),
  serverId: text.optional(),
  sessionId: text.optional(),
  toolName: text.optional(),
  action: text.optional(),
  source: z.enum(AUDIT_SOURCES).optional(),
  from: time.optional(),
  to: time.optional(),
  /** Free text over the event's fields and metadata (the raw message); needs from and to (SEARCH_MAX_RANGE_HOURS). */
  q: z.string().max(FREE_TEXT_MAX_LENGTH).optional(),
};

export const auditQuerySchema = z.object({
  ...eventFilterFields,
  cursor: z.string().regex(/^\d{1,15}$/, 'must be the nextCursor of a previous page').optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

export const countQuerySchema = z.object(eventFilterFields);

const schema = {
  summary: 'Stored audit events, filtered, cursor paging by seq; q (free text) needs from and to at most SEARCH_MAX_RANGE_HOURS apart, 503 past SEARCH_QUERY_TIMEOUT_MS',
  security: SECURITY.reader,
  querystring: auditQuerySchema,
  response: withErrors({ 200: auditEventPageSchema }),
};

const countSchema = {
  summary: 'How many stored events match the filters (the listing\'s), counted up to AUDIT_COUNT_MAX (then capped: true); 503 past SEARCH_QUERY_TIMEOUT_MS',
  security: SECURITY.reader,
  querystring: countQuerySchema,
  response: withErrors({ 200: auditEventCountSchema }),
};

export interface AuditRouteDeps {
  /** The listing and counts read the replica while it is within its lag bound, by the rule of listPage. */
  replica: ReadReplica;
  auth: Authenticator;
  /** The organization's read slots (ORG_READ_SLOTS, ORG_READ_QUEUE_MAX): a listing runs in one. */
  reads: OrgReadSlots;
  /** Most bytes of one page's events (READ_PAGE_MAX_BYTES). */
  pageMaxBytes: number;
  /** A page ended early by its byte budget. */
  onPageCut?: () => void;
  /** Free text searches at most this many hours (SEARCH_MAX_RANGE_HOURS). */
  searchMaxRangeHours: number;
  /** Longest a free-text listing or a count may run (SEARCH_QUERY_TIMEOUT_MS). */
  searchTimeoutMs: number;
  /** Most matches a count counts (AUDIT_COUNT_MAX). */
  countMax: number;
}

export function registerAuditRoutes(fastify: FastifyInstance, deps: AuditRouteDeps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/api/v1/audit-events', { onRequest: deps.auth.require({ scope: 'events:read' }), schema }, async (request) => {
    const q = request.query;
    checkFreeText(q, deps.searchMaxRangeHours);
    const orgId = authOf(request).orgId;
    const cursor = q.cursor === undefined ? undefined : Number(q.cursor);
    const filter = { ...q, afterSeq: q.order === 'asc' ? cursor : undefined, beforeSeq: q.order === 'desc' ? cursor : undefined, limit: q.limit, maxBytes: deps.pageMaxBytes };
    // The page's statements run in one of the organization's read slots (429 when its queue is full).
    const read = (db: Db) =>
      q.q ? readWithTimeout(db, deps.searchTimeoutMs, 'search_timeout', 'the free-text search', (tx) => listAuditEvents(tx, orgId, filter)) : listAuditEvents(db, orgId, filter);
    const page = await deps.reads.run(orgId, () => listPage(deps.replica, orgId, filter, read));
    const items = page.rows;
    if (page.cutByBytes) deps.onPageCut?.();
    // A page ended by its byte budget continues after its last event, as a full page does.
    const nextCursor = items.length > 0 && (page.cutByBytes || items.length === q.limit) ? String(items[items.length - 1].seq) : null;
    return { items, nextCursor };
  });

  app.get('/api/v1/audit-events/count', { onRequest: deps.auth.require({ scope: 'events:read' }), schema: countSchema }, async (request) => {
    const q = request.query;
    checkFreeText(q, deps.searchMaxRangeHours);
    const orgId = authOf(request).orgId;
    return deps.reads.run(orgId, () => deps.replica.run((db) => readWithTimeout(db, deps.searchTimeoutMs, 'count_timeout', 'the count', (tx) => countAuditEvents(tx, orgId, q, deps.countMax))));
  });
}
