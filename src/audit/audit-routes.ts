// GET /api/v1/audit-events: the organization's stored audit events, filtered, with cursor paging by seq.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { auditEventPageSchema } from '../contract/api-rows.js';
import type { Db } from '../db/db.js';
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

export const auditQuerySchema = z.object({
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

export function registerAuditRoutes(fastify: FastifyInstance, deps: { db: Db; auth: Authenticator }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/api/v1/audit-events', { onRequest: deps.auth.require({ scope: 'events:read' }), schema }, async (request) => {
    const q = request.query;
    const cursor = q.cursor === undefined ? undefined : Number(q.cursor);
    const items = await listAuditEvents(deps.db, authOf(request).orgId, {
      ...q,
      afterSeq: q.order === 'asc' ? cursor : undefined,
      beforeSeq: q.order === 'desc' ? cursor : undefined,
      limit: q.limit,
    });
    const nextCursor = items.length === q.limit ? String(items[items.length - 1].seq) : null;
    return { items, nextCursor };
  });
}
