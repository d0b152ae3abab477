// /api/v1/api-keys: an organization's admins list, create and revoke that organization's keys.
import type { FastifyInstance } from 'fastify';
import type { AuthRepo } from './auth-repo.js';
import { authOf, type Authenticator } from './authenticate.js';
import { createKeyBody, uuidParam } from './auth-schemas.js';
import { publicKey, type ApiKeyService } from './api-keys.js';

export function registerApiKeyRoutes(app: FastifyInstance, deps: { auth: Authenticator; repo: AuthRepo; keys: ApiKeyService }) {
  const admin = deps.auth.require({ scope: 'org:admin' });

  app.get('/api/v1/api-keys', { onRequest: admin }, async (request) => {
    const rows = await deps.repo.listApiKeys(authOf(request).orgId);
    return { items: rows.map(publicKey) };
  });

  app.post('/api/v1/api-keys', { onRequest: admin }, async (request, reply) => {
    const body = createKeyBody.parse(request.body);
    return reply.code(201).send(await deps.keys.issue(authOf(request).orgId, body.name, body.scopes));
  });

  app.delete('/api/v1/api-keys/:id', { onRequest: admin }, async (request, reply) => {
    const { id } = uuidParam.parse(request.params);
    if (!(await deps.keys.revoke(id, authOf(request).orgId))) throw app.httpErrors.notFound('API key not found');
    return reply.code(204).send();
  });
}
