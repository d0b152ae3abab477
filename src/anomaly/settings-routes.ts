// GET/PUT /api/v1/anomaly-settings: the organization's effective rate-spike settings, and changing them.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import type { Db } from '../db/db.js';
import { zodIssues } from '../http/error-handler.js';
import { BadRequestError, ForbiddenError } from '../http/errors.js';
import { settingsPatchSchema, type AnomalySettings } from './anomaly-schemas.js';
import { readSettings, updateSettings } from './settings-repo.js';

export interface SettingsRouteDeps {
  db: Db;
  auth: Authenticator;
  defaults: AnomalySettings;
}

/** Changing settings: an org admin signed in, or an API key with sessions:write (automation). */
async function requireSettingsWrite(request: FastifyRequest): Promise<void> {
  const { principal, scopes } = authOf(request);
  const needed = principal.type === 'user' ? 'org:admin' : 'sessions:write';
  if (!scopes.includes(needed)) throw new ForbiddenError(`missing permission ${needed}`, 'missing_scope');
}

export function registerSettingsRoutes(app: FastifyInstance, deps: SettingsRouteDeps) {
  app.get('/api/v1/anomaly-settings', { onRequest: deps.auth.require({ scope: 'events:read' }) }, async (request) =>
    readSettings(deps.db, authOf(request).orgId, deps.defaults),
  );

  app.put('/api/v1/anomaly-settings', { onRequest: [deps.auth.require(), requireSettingsWrite], bodyLimit: 16 * 1024 }, async (request) => {
    const r = settingsPatchSchema.safeParse(request.body);
    if (!r.success) throw new BadRequestError('anomaly settings are invalid', zodIssues(r.error));
    const settings = await updateSettings(deps.db, authOf(request).orgId, r.data, deps.defaults);
    request.log.info({ orgId: authOf(request).orgId, settings }, 'anomaly settings changed');
    return settings;
  });
}
