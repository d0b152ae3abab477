// GET /api/v1/audit-events: the organization's stored audit events, filtered, with cursor paging by seq.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { auditEventPageSchema } from '../contract/api-rows.js';
import type { Db } from '../db/db.js';
import type { OrgReadSlots } from '../db/org-read-slots.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { listAuditEvents } from './audit-repo.js';
import { AUDIT_EVENT_TYPES, AUDIT_SOURCES } from './audit-types.js';

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

/**
 * Strict: a parameter the route does not know (a misspelling, or an array form such as `from[]=`) is a 400 naming it,
 * never ignored (an ignored filter silently widens the answer).
 */
export const auditQuerySchema = z.strictObject({
  type: z.enum(AUDIT_EVENT_TYPES).optional(),
  serverId: text.optional(),
  sessionId: text.optional(),
  toolName: text.optional(),
  action: text.optional(),
  source: z.enum(AUDIT_SOURCES).optional(),
  from: time.optional(),
  to: time.optional(),
  cursor: z.string().regex(/^\d{1,15}$/, 'must be the nextCursor of a previous page').optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

const schema = {
  summary: 'Stored audit events, filtered, cursor paging by seq',
  security: SECURITY.reader,
  querystring: auditQuerySchema,
  response: withErrors({ 200: auditEventPageSchema }),
};

export interface AuditRouteDeps {
  db: Db;
  auth: Authenticator;
  /** The organization's read slots (ORG_READ_SLOTS, ORG_READ_QUEUE_MAX): a listing runs in one. */
  reads: OrgReadSlots;
  /** Most bytes of one page's events (READ_PAGE_MAX_BYTES). */
  pageMaxBytes: number;
  /** A page ended early by its byte budget. */
  onPageCut?: () => void;
}

export function registerAuditRoutes(fastify: FastifyInstance, deps: AuditRouteDeps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/api/v1/audit-events', { onRequest: deps.auth.require({ scope: 'events:read' }), schema }, async (request) => {
    const q = request.query;
    const orgId = authOf(request).orgId;
    const cursor = q.cursor === undefined ? undefined : Number(q.cursor);
    // The page's statements run in one of the organization's read slots (429 when its queue is full).
    const page = await deps.reads.run(orgId, () =>
      listAuditEvents(deps.db, orgId, {
        ...q,
        afterSeq: q.order === 'asc' ? cursor : undefined,
        beforeSeq: q.order === 'desc' ? cursor : undefined,
        limit: q.limit,
        maxBytes: deps.pageMaxBytes,
      }),
    );
    const items = page.rows;
    if (page.cutByBytes) deps.onPageCut?.();
    // A page ended by its byte budget continues after its last event, as a full page does.
    const nextCursor = items.length > 0 && (page.cutByBytes || items.length === q.limit) ? String(items[items.length - 1].seq) : null;
    return { items, nextCursor };
  });
}
