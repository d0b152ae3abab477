// GET /api/v1/events: the organization's live event stream (SSE), with replay by Last-Event-ID and filters.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { STREAM_EVENT_TYPES, type StreamEventType } from '../audit/audit-types.js';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { BadRequestError } from '../http/errors.js';
import { toErrorResponse, zodIssues } from '../http/error-handler.js';
import { SSE_HEADERS } from './sse-format.js';
import type { StreamHub } from './stream-hub.js';

const seqString = z.string().regex(/^\d{1,15}$/, 'must be a non-negative integer event id');

export const streamQuerySchema = z.object({
  types: z
    .string()
    .max(200)
    .optional()
    .transform((v, ctx) => {
      if (!v) return null;
      const list = v.split(',').map((s) => s.trim()).filter(Boolean);
      const bad = list.filter((t) => !(STREAM_EVENT_TYPES as readonly string[]).includes(t));
      if (bad.length) {
        ctx.addIssue({ code: 'custom', message: `unknown event type(s) ${bad.join(', ')}; allowed: ${STREAM_EVENT_TYPES.join(', ')}` });
        return z.NEVER;
      }
      return new Set(list as StreamEventType[]);
    }),
  serverId: z.string().min(1).max(200).optional(),
  lastEventId: seqString.optional(),
});

export function registerStreamRoutes(app: FastifyInstance, deps: { auth: Authenticator; hub: StreamHub }) {
  app.get('/api/v1/events', { onRequest: deps.auth.require({ scope: 'events:read' }) }, async (request, reply) => {
    const parsed = streamQuerySchema.safeParse(request.query);
    if (!parsed.success) throw new BadRequestError('invalid stream query', zodIssues(parsed.error));
    const header = request.headers['last-event-id'];
    let lastEventId: number | null = null;
    const rawId = typeof header === 'string' && header.trim() !== '' ? header.trim() : parsed.data.lastEventId;
    if (rawId !== undefined) {
      if (!seqString.safeParse(rawId).success) throw new BadRequestError('Last-Event-ID must be a non-negative integer event id');
      lastEventId = Number(rawId);
    }
    const auth = authOf(request);
    if (request.method === 'HEAD') {
      // What a GET would answer, without opening (or counting) a stream.
      const { Connection: _connection, ...head } = SSE_HEADERS;
      return reply.code(200).headers(head).send();
    }
    const headers: Record<string, string | number | string[]> = { ...SSE_HEADERS };
    for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) headers[k] = v as string | number | string[];
    // Limits and the feed are checked before hijacking, so failures still get a JSON error.
    reply.hijack();
    try {
      await deps.hub.open(reply.raw, headers, {
        identity: {
          orgId: auth.orgId,
          keyId: auth.principal.type === 'api_key' ? auth.principal.id : null,
          userId: auth.principal.type === 'user' ? auth.principal.id : null,
          loginSessionId: auth.principal.type === 'user' ? auth.principal.loginSessionId : null,
        },
        filter: { types: parsed.data.types, serverId: parsed.data.serverId ?? null },
        lastEventId,
      });
    } catch (err) {
      if (!reply.raw.headersSent) {
        const { body, retryAfter } = toErrorResponse(err);
        const h: Record<string, string | number | string[]> = { ...headers, 'Content-Type': 'application/json; charset=utf-8' };
        delete h['Cache-Control'];
        delete h['X-Accel-Buffering'];
        if (retryAfter !== undefined) h['Retry-After'] = String(retryAfter);
        reply.raw.writeHead(body.statusCode, h);
        reply.raw.end(JSON.stringify(body));
        if (body.statusCode >= 500) request.log.error({ err }, 'stream open failed');
      } else {
        reply.raw.destroy();
      }
    }
  });
}
