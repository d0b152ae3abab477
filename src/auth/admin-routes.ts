// Operator admin API under /api/v1/admin, enabled only when ADMIN_TOKEN is set.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createdApiKeySchema } from '../contract/api-rows.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import type { AuthRepo } from './auth-repo.js';
import { createdOrgBody, createdUserBody, createKeyBody, createOrgBody, createUserBody, orgIdParam, orgListBody, uuidParam } from './auth-schemas.js';
import type { ApiKeyService } from './api-keys.js';
import type { PasswordHasher } from './password-hasher.js';
import { safeEqual, sha256Hex } from './tokens.js';
import { Conflict, NotFound, Unauthenticated } from '../shared/domain-errors.js';

export function registerAdminRoutes(app: FastifyInstance, deps: { adminToken: string; repo: AuthRepo; keys: ApiKeyService; hasher: PasswordHasher }) {
  const expected = sha256Hex(deps.adminToken);
  const requireAdmin = async (request: FastifyRequest) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!m || !safeEqual(sha256Hex(m[1]), expected)) throw new Unauthenticated('admin token required');
  };
  const security = SECURITY.admin;

  app.register(async (scope) => {
    const admin = scope.withTypeProvider<ZodTypeProvider>();
    // Before the body is read: without the token, nothing of the request is parsed.
    admin.addHook('onRequest', requireAdmin);

    admin.get(
      '/api/v1/admin/organizations',
      { schema: { summary: 'List organizations, oldest first, at most 1,000 (operator; e.g. to find the Demo organization again)', security, response: withErrors({ 200: orgListBody }) } },
      async () => ({ items: await deps.repo.listOrgs(1000) }),
    );

    admin.post(
      '/api/v1/admin/organizations',
      { schema: { summary: 'Create an organization (operator)', security, body: createOrgBody, response: withErrors({ 201: createdOrgBody }) } },
      async (request, reply) => {
        const org = await deps.repo.createOrg(request.body.name);
        return reply.code(201).send({ id: org.id, name: org.name });
      },
    );

    admin.post(
      '/api/v1/admin/organizations/:orgId/users',
      { schema: { summary: 'Create a user in an organization (operator)', security, params: orgIdParam, body: createUserBody, response: withErrors({ 201: createdUserBody }) } },
      async (request, reply) => {
        const { orgId } = request.params;
        const body = request.body;
        if (!(await deps.repo.getOrg(orgId))) throw new NotFound('organization not found');
        let user = await deps.repo.findUserByEmail(body.email);
        if (user) {
          // An existing user joins another organization; the password is not changed through this route.
          await deps.repo.addMembership(user.id, orgId, body.role);
          return reply.code(201).send({ id: user.id, email: user.email, role: body.role, existing: true });
        }
        const created = await deps.repo.createUser(body.email, await deps.hasher.hash(body.password)).catch((err: { code?: string }) => {
          if (err.code === '23505') throw new Conflict('a user with that email already exists');
          throw err;
        });
        user = { ...created, password_hash: '' };
        await deps.repo.addMembership(user.id, orgId, body.role);
        return reply.code(201).send({ id: user.id, email: user.email, role: body.role });
      },
    );

    admin.post(
      '/api/v1/admin/organizations/:orgId/api-keys',
      { schema: { summary: 'Create an API key (operator)', security, params: orgIdParam, body: createKeyBody, response: withErrors({ 201: createdApiKeySchema }) } },
      async (request, reply) => {
        const { orgId } = request.params;
        if (!(await deps.repo.getOrg(orgId))) throw new NotFound('organization not found');
        const key = await deps.keys.issue(orgId, request.body.name, request.body.scopes);
        return reply.code(201).send(key);
      },
    );

    admin.delete(
      '/api/v1/admin/api-keys/:id',
      { schema: { summary: 'Revoke an API key (operator)', security, params: uuidParam, response: withErrors({ 204: z.undefined() }) } },
      async (request, reply) => {
        if (!(await deps.keys.revoke(request.params.id))) throw new NotFound('API key not found');
        return reply.code(204).send();
      },
    );
  });
}
