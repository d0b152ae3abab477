// GET /api/v1/events: the organization's live event stream (SSE), with replay by Last-Event-ID and filters.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { STREAM_EVENT_TYPES, type StreamEventType } from '../audit/audit-types.js';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { toErrorResponse } from '../http/error-handler.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
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
  /** `true`: the stream also carries the organization's signed checkpoints as `checkpoint` events, as they are issued. */
  checkpoints: z.enum(['true', 'false']).optional(),
});

/** The resume header an EventSource sends; blank means none (then the lastEventId parameter counts). */
export const streamHeadersSchema = z.looseObject({
  'last-event-id': z
    .string()
    .regex(/^\s*(\d{1,15})?\s*$/, 'must be a non-negative integer event id')
    .optional(),
});

const schema = {
  summary:
    'Server-sent event stream of the organization (tool_call, anomaly, session_update; with checkpoints=true also `checkpoint`: the log\'s signed checkpoints as issued); replay with the Last-Event-ID header or lastEventId; 429 past the connection limit',
  security: SECURITY.reader,
  querystring: streamQuerySchema,
  headers: streamHeadersSchema,
  response: withErrors({
    200: { description: 'the event stream: `id:` seq, `event:` type, `data:` the payload', content: { 'text/event-stream': { schema: z.string() } } },
  }),
};

export function registerStreamRoutes(fastify: FastifyInstance, deps: { auth: Authenticator; hub: StreamHub }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  app.get('/api/v1/events', { onRequest: deps.auth.require({ scope: 'events:read' }), schema }, async (request, reply) => {
    const query = request.query;
    const header = request.headers['last-event-id']?.trim();
    const rawId = header ? header : query.lastEventId;
    const lastEventId = rawId === undefined ? null : Number(rawId);
    const auth = authOf(request);
    if (request.method === 'HEAD') {
      // What a GET would answer, without opening (or counting) a stream.
      const { Connection: _connection, ...head } = SSE_HEADERS;
      return reply.code(200).headers(head).send('');
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
        filter: { types: query.types, serverId: query.serverId ?? null },
        lastEventId,
        checkpoints: query.checkpoints === 'true',
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
