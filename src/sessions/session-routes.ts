// /api/v1/sessions: list, read, suspend and resume agent sessions.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { authOf, describePrincipal, type Authenticator } from '../auth/authenticate.js';
import type { EventLog } from '../audit/event-log/event-log.js';
import { sessionPageSchema, sessionRowSchema } from '../contract/api-rows.js';
import type { Db } from '../db/db.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { sessionIdSchema, sessionListQuerySchema, sessionParamsSchema, transitionBodySchema } from './session-schemas.js';
import { createSessionService, type Transition } from './session-service.js';
import { InvalidInput, NotFound } from '../shared/domain-errors.js';

export interface SessionRouteDeps {
  db: Db;
  auth: Authenticator;
  eventLog: EventLog;
}

/** The session id of the path; an id no session can have is a 404, like any unknown one. */
function sessionIdOf(params: { id: string }): string {
  const r = sessionIdSchema.safeParse(params.id);
  if (!r.success) throw new NotFound('session not found');
  return r.data;
}

export function registerSessionRoutes(fastify: FastifyInstance, deps: SessionRouteDeps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const service = createSessionService(deps);
  const onRequest = deps.auth.require({ scope: 'events:read' });
  const security = SECURITY.reader;

  app.get(
    '/api/v1/sessions',
    { onRequest, schema: { summary: 'Agent sessions, most recently seen first, keyset paging', security, querystring: sessionListQuerySchema, response: withErrors({ 200: sessionPageSchema }) } },
    async (request) => service.list(authOf(request).orgId, request.query),
  );

  app.get(
    '/api/v1/sessions/:id',
    { onRequest, schema: { summary: 'One agent session', security, params: sessionParamsSchema, response: withErrors({ 200: sessionRowSchema }) } },
    async (request) => service.get(authOf(request).orgId, sessionIdOf(request.params)),
  );

  // Transitions live in their own context so that an empty JSON body (no reason) is accepted rather than a parse error.
  void app.register(async (plain) => {
    const scope = plain.withTypeProvider<ZodTypeProvider>();
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      const text = String(body).trim();
      if (text === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text));
      } catch (err) {
        done(new InvalidInput(`body is not valid JSON: ${(err as Error).message}`), undefined);
      }
    });

    const summaries: Record<Transition, string> = {
      suspend: 'Suspend a session (409 when already suspended); optional body {reason}',
      resume: 'Resume a session (409 when not suspended); optional body {reason}',
    };
    for (const t of ['suspend', 'resume'] as Transition[]) {
      const schema = {
        summary: summaries[t],
        security,
        params: sessionParamsSchema,
        // An empty body reaches validation as null.
        body: transitionBodySchema.nullable(),
        response: withErrors({ 200: sessionRowSchema }),
      };
      scope.post(`/api/v1/sessions/:id/${t}`, { onRequest: deps.auth.require({ scope: 'sessions:write' }), bodyLimit: 16 * 1024, schema }, async (request) => {
        const auth = authOf(request);
        const sessionId = sessionIdOf(request.params);
        return service.transition(auth.orgId, sessionId, t, { by: describePrincipal(auth.principal), reason: request.body?.reason || null, source: 'operator' });
      });
    }
  });
}
