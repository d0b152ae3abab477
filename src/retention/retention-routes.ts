// Operator admin API for retention: GET/PUT/DELETE /api/v1/admin/organizations/:orgId/retention (with ADMIN_TOKEN).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { orgIdParam } from '../auth/auth-schemas.js';
import { safeEqual, sha256Hex } from '../auth/tokens.js';
import type { Db } from '../db/db.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { readOrgRetention, writeOrgRetention } from './retention-repo.js';
import { NotFound, Unauthenticated } from '../shared/domain-errors.js';

/** Longest period an organization may set: 100 years. */
export const MAX_RETENTION_DAYS = 36_500;

export const retentionBody = z.object({
  /** Days to keep events (counted from when they were stored), or null to keep them forever. */
  days: z.number().int().min(1).max(MAX_RETENTION_DAYS).nullable(),
});

export const retentionAnswer = z.object({
  orgId: z.string(),
  /** The organization's own period (null = forever), or absent when it follows the default. */
  days: z.number().int().nullable().optional(),
  /** The period in effect: the organization's own, else AUDIT_RETENTION_DAYS; null = forever. */
  effectiveDays: z.number().int().nullable(),
  source: z.enum(['organization', 'default']),
});

export function registerRetentionRoutes(app: FastifyInstance, deps: { adminToken: string; db: Db; defaultDays: number | undefined }) {
  const expected = sha256Hex(deps.adminToken);
  const requireAdmin = async (request: FastifyRequest) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!m || !safeEqual(sha256Hex(m[1]), expected)) throw new Unauthenticated('admin token required');
  };
  const security = SECURITY.admin;
  const answer = (orgId: string, days: number | null | undefined) => ({
    orgId,
    ...(days === undefined ? {} : { days }),
    effectiveDays: days === undefined ? (deps.defaultDays ?? null) : days,
    source: days === undefined ? ('default' as const) : ('organization' as const),
  });
  const path = '/api/v1/admin/organizations/:orgId/retention';

  app.register(async (scope) => {
    const admin = scope.withTypeProvider<ZodTypeProvider>();
    admin.addHook('onRequest', requireAdmin);

    admin.get(path, { schema: { summary: "An organization's retention period (operator)", security, params: orgIdParam, response: withErrors({ 200: retentionAnswer }) } }, async (request) => {
      const setting = await readOrgRetention(deps.db, request.params.orgId);
      if (!setting) throw new NotFound('organization not found');
      return answer(request.params.orgId, setting.days);
    });

    admin.put(
      path,
      { schema: { summary: "Set an organization's retention period in days, or null to keep its events forever (operator)", security, params: orgIdParam, body: retentionBody, response: withErrors({ 200: retentionAnswer }) } },
      async (request) => {
        if (!(await writeOrgRetention(deps.db, request.params.orgId, request.body.days))) throw new NotFound('organization not found');
        return answer(request.params.orgId, request.body.days);
      },
    );

    admin.delete(
      path,
      { schema: { summary: 'Return an organization to the default retention period, AUDIT_RETENTION_DAYS (operator)', security, params: orgIdParam, response: withErrors({ 200: retentionAnswer }) } },
      async (request) => {
        if (!(await writeOrgRetention(deps.db, request.params.orgId, undefined))) throw new NotFound('organization not found');
        return answer(request.params.orgId, undefined);
      },
    );
  });
}
