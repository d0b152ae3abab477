// GET/PUT /api/v1/anomalies/acknowledgement: the organization's acknowledged anomalies (the dashboard's "Acknowledge"), kept on the server.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authOf, describePrincipal, type Authenticator } from '../auth/authenticate.js';
import { anomalyAcknowledgementSchema } from '../contract/api-rows.js';
import type { Db } from '../db/db.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { acknowledgeUpTo, readAcknowledgement } from './acknowledgements-repo.js';

export const acknowledgeBodySchema = z.object({ upToSeq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER) }).strict();

export function registerAcknowledgementRoutes(fastify: FastifyInstance, deps: { db: Db; auth: Authenticator }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const path = '/api/v1/anomalies/acknowledgement';
  const response = withErrors({ 200: anomalyAcknowledgementSchema });
  app.get(
    path,
    { onRequest: deps.auth.require({ scope: 'events:read' }), schema: { summary: 'Anomalies acknowledged by the organization: every anomaly with seq <= upToSeq', security: SECURITY.reader, response } },
    async (request) => readAcknowledgement(deps.db, authOf(request).orgId),
  );
  app.put(
    path,
    {
      onRequest: deps.auth.require({ scope: 'sessions:write' }),
      bodyLimit: 1024,
      schema: {
        summary: 'Acknowledge every anomaly up to a seq, for the whole organization (any member by cookie, or a key with sessions:write); it only rises, capped at the last stored seq',
        security: SECURITY.reader,
        body: acknowledgeBodySchema,
        response,
      },
    },
    async (request) => {
      const auth = authOf(request);
      const ack = await acknowledgeUpTo(deps.db, auth.orgId, request.body.upToSeq, describePrincipal(auth.principal));
      request.log.info({ orgId: auth.orgId, upToSeq: ack.upToSeq }, 'anomalies acknowledged');
      return ack;
    },
  );
}
