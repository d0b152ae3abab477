// /api/v1/api-keys: an organization's admins list, create and revoke that organization's keys.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { apiKeyListSchema, createdApiKeySchema } from '../contract/api-rows.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import type { AuthRepo } from './auth-repo.js';
import { authOf, type Authenticator } from './authenticate.js';
import { createKeyBody, uuidParam } from './auth-schemas.js';
import { publicKey, type ApiKeyService } from './api-keys.js';
import { NotFound } from '../shared/domain-errors.js';

export function registerApiKeyRoutes(fastify: FastifyInstance, deps: { auth: Authenticator; repo: AuthRepo; keys: ApiKeyService }) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const admin = deps.auth.require({ scope: 'org:admin' });

  app.get(
    '/api/v1/api-keys',
    { onRequest: admin, schema: { summary: "List the organization's API keys (org admins)", security: SECURITY.cookie, response: withErrors({ 200: apiKeyListSchema }) } },
    async (request) => {
      const rows = await deps.repo.listApiKeys(authOf(request).orgId);
      return { items: rows.map(publicKey) };
    },
  );

  app.post(
    '/api/v1/api-keys',
    {
      onRequest: admin,
      schema: { summary: 'Create an API key; the key is returned once', security: SECURITY.cookie, body: createKeyBody, response: withErrors({ 201: createdApiKeySchema }) },
    },
    async (request, reply) => reply.code(201).send(await deps.keys.issue(authOf(request).orgId, request.body.name, request.body.scopes)),
  );

  app.delete(
    '/api/v1/api-keys/:id',
    { onRequest: admin, schema: { summary: 'Revoke an API key', security: SECURITY.cookie, params: uuidParam, response: withErrors({ 204: z.undefined() }) } },
    async (request, reply) => {
      if (!(await deps.keys.revoke(request.params.id, authOf(request).orgId))) throw new NotFound('API key not found');
      return reply.code(204).send();
    },
  );
}
