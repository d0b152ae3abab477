// GET/PUT /api/v1/anomaly-settings: the organization's effective rate-spike settings, and changing them.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import type { Db } from '../db/db.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { anomalySettingsSchema, settingsPatchSchema, type AnomalySettings } from './anomaly-schemas.js';
import { readSettings, updateSettings } from './settings-repo.js';
import { Forbidden } from '../shared/domain-errors.js';

export interface SettingsRouteDeps {
  db: Db;
  auth: Authenticator;
  defaults: AnomalySettings;
}

/** Changing settings: an org admin signed in, or an API key with sessions:write (automation). */
async function requireSettingsWrite(request: FastifyRequest): Promise<void> {
  const { principal, scopes } = authOf(request);
  const needed = principal.type === 'user' ? 'org:admin' : 'sessions:write';
  if (!scopes.includes(needed)) throw new Forbidden(`missing permission ${needed}`, 'missing_scope');
}

export function registerSettingsRoutes(fastify: FastifyInstance, deps: SettingsRouteDeps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const response = withErrors({ 200: anomalySettingsSchema });
  app.get(
    '/api/v1/anomaly-settings',
    { onRequest: deps.auth.require({ scope: 'events:read' }), schema: { summary: 'Rate-spike detection settings of the organization', security: SECURITY.reader, response } },
    async (request) => readSettings(deps.db, authOf(request).orgId, deps.defaults),
  );

  const putSchema = {
    summary: 'Change rate-spike detection settings (org admin login, or a key with sessions:write); null resets one to the default',
    security: SECURITY.reader,
    body: settingsPatchSchema,
    response,
  };
  app.put('/api/v1/anomaly-settings', { onRequest: [deps.auth.require(), requireSettingsWrite], bodyLimit: 16 * 1024, schema: putSchema }, async (request) => {
    const settings = await updateSettings(deps.db, authOf(request).orgId, request.body, deps.defaults);
    request.log.info({ orgId: authOf(request).orgId, settings }, 'anomaly settings changed');
    return settings;
  });
}
