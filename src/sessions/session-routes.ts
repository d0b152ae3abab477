// /api/v1/sessions: list, read, suspend and resume agent sessions.
import type { FastifyInstance } from 'fastify';
import type { z } from 'zod';
import { authOf, describePrincipal, type Authenticator } from '../auth/authenticate.js';
import type { EventRecorder } from '../audit/record-events.js';
import type { Db } from '../db/db.js';
import { zodIssues } from '../http/error-handler.js';
import { BadRequestError, NotFoundError } from '../http/errors.js';
import { sessionIdSchema, sessionListQuerySchema, sessionParamsSchema, transitionBodySchema } from './session-schemas.js';
import { createSessionService, type Transition } from './session-service.js';

export interface SessionRouteDeps {
  db: Db;
  auth: Authenticator;
  recorder: EventRecorder;
}

function parseOr400<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw new BadRequestError(`${what} is invalid`, zodIssues(r.error));
  return r.data;
}

/** The session id of the path; an id no session can have is a 404, like any unknown one. */
function sessionIdOf(params: unknown): string {
  const { id } = parseOr400(sessionParamsSchema, params, 'path');
  const r = sessionIdSchema.safeParse(id);
  if (!r.success) throw new NotFoundError('session not found');
  return r.data;
}

export function registerSessionRoutes(app: FastifyInstance, deps: SessionRouteDeps) {
  const service = createSessionService(deps);
  const read = { onRequest: deps.auth.require({ scope: 'events:read' }) };

  app.get('/api/v1/sessions', read, async (request) => {
    const q = parseOr400(sessionListQuerySchema, request.query, 'query');
    return service.list(authOf(request).orgId, q);
  });

  app.get('/api/v1/sessions/:id', read, async (request) => service.get(authOf(request).orgId, sessionIdOf(request.params)));

  // Transitions live in their own context so that an empty JSON body (no reason) is accepted rather than a parse error.
  void app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      const text = String(body).trim();
      if (text === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text));
      } catch (err) {
        done(new BadRequestError(`body is not valid JSON: ${(err as Error).message}`), undefined);
      }
    });

    for (const t of ['suspend', 'resume'] as Transition[]) {
      scope.post(`/api/v1/sessions/:id/${t}`, { onRequest: deps.auth.require({ scope: 'sessions:write' }), bodyLimit: 16 * 1024 }, async (request) => {
        const auth = authOf(request);
        const sessionId = sessionIdOf(request.params);
        const body = parseOr400(transitionBodySchema, request.body ?? {}, 'body');
        return service.transition(auth.orgId, sessionId, t, { by: describePrincipal(auth.principal), reason: body.reason || null, source: 'operator' });
      });
    }
  });
}
