// Cookie login for browsers: login (rate-limited), logout, who am I, and the active organization.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ControlChannel } from '../bus/control-channel.js';
import type { Config } from '../config.js';
import { meSchema, userMeSchema, type UserMe } from '../contract/api-rows.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import type { AuthRepo } from './auth-repo.js';
import { authOf, SESSION_COOKIE, type Authenticator } from './authenticate.js';
import { activeOrgBody, loginBody } from './auth-schemas.js';
import { normalizeEmail } from './emails.js';
import type { PasswordHasher } from './password-hasher.js';
import { DUMMY_PASSWORD_HASH } from './passwords.js';
import { newLoginToken, sha256Hex } from './tokens.js';
import { Forbidden, RateLimited, Unauthenticated } from '../shared/domain-errors.js';

export interface AuthRouteDeps {
  config: Config;
  repo: AuthRepo;
  auth: Authenticator;
  control: Pick<ControlChannel, 'publish'>;
  hasher: PasswordHasher;
}

async function meBody(repo: AuthRepo, user: { id: string; email: string }, activeOrgId: string | null): Promise<UserMe> {
  const orgs = await repo.memberships(user.id);
  const active = orgs.find((o) => o.org_id === activeOrgId) ?? orgs[0];
  return {
    user: { id: user.id, email: user.email },
    organizations: orgs.map((o) => ({ id: o.org_id, name: o.name, role: o.role })),
    activeOrganizationId: active?.org_id ?? null,
  };
}

export function registerAuthRoutes(fastify: FastifyInstance, deps: AuthRouteDeps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const { config, repo } = deps;
  const cookieOptions = {
    path: '/',
    httpOnly: true,
    sameSite: config.COOKIE_SAME_SITE,
    secure: config.COOKIE_SECURE || config.COOKIE_SAME_SITE === 'none',
  } as const;

  /** Login CSRF guard: a browser login must come from our own page or an allowed dashboard origin. */
  function checkLoginOrigin(request: FastifyRequest) {
    const origin = request.headers.origin;
    if (!origin) return;
    if (origin !== `${request.protocol}://${request.host}` && !config.CORS_ORIGINS.includes(origin)) {
      throw new Forbidden(`origin ${origin} is not allowed`, 'origin_not_allowed');
    }
  }

  // Attempts per client address, whatever the email: one address cannot spend unbounded password hashing by trying a
  // fresh email each time. Checked before the body is read.
  const perAddress = app.createRateLimit({
    max: config.LOGIN_RATE_LIMIT_PER_ADDRESS_MAX,
    timeWindow: config.LOGIN_RATE_LIMIT_WINDOW_SECONDS * 1000,
    keyGenerator: (req: FastifyRequest) => `login-address:${req.ip}`,
  });
  const limitPerAddress = async (request: FastifyRequest) => {
    const r = await perAddress(request);
    if (!r.isAllowed && r.isExceeded) throw new RateLimited(`too many sign-in attempts from this address; retry in ${r.ttlInSeconds} s`, r.ttlInSeconds);
  };

  app.post(
    '/api/v1/auth/login',
    {
      onRequest: limitPerAddress,
      // Before the body is validated: a login from a foreign page is refused whatever it sends.
      preValidation: async (request) => checkLoginOrigin(request),
      schema: { summary: 'Sign in; sets the session cookie', security: SECURITY.none, body: loginBody, response: withErrors({ 200: userMeSchema }) },
      config: {
        rateLimit: {
          max: config.LOGIN_RATE_LIMIT_MAX,
          timeWindow: config.LOGIN_RATE_LIMIT_WINDOW_SECONDS * 1000,
          keyGenerator: (req: FastifyRequest) => {
            const email = (req.body as { email?: unknown } | undefined)?.email;
            // The same normalization as the lookup: every spelling that could sign in to an account counts against it.
            return `login:${req.ip}:${typeof email === 'string' ? normalizeEmail(email.slice(0, 1000)).slice(0, 320) : ''}`;
          },
        },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const user = await repo.findUserByEmail(body.email);
      const ok = await deps.hasher.verify(body.password, user?.password_hash ?? DUMMY_PASSWORD_HASH);
      if (!user || !ok) throw new Unauthenticated('wrong email or password');
      const orgs = await repo.memberships(user.id);
      const token = newLoginToken();
      const expires = new Date(Date.now() + config.SESSION_TTL_HOURS * 3600_000);
      await repo.createLoginSession(sha256Hex(token), user.id, orgs[0]?.org_id ?? null, expires);
      reply.setCookie(SESSION_COOKIE, token, { ...cookieOptions, expires });
      return meBody(repo, user, orgs[0]?.org_id ?? null);
    },
  );

  const logoutSchema = { summary: 'Sign out', security: SECURITY.cookie, response: withErrors({ 204: z.undefined() }) };
  app.post('/api/v1/auth/logout', { schema: logoutSchema }, async (request, reply) => {
    const token = request.cookies[SESSION_COOKIE];
    if (token) {
      const session = await repo.findLoginSession(sha256Hex(token));
      if (session) {
        // Signing out is a cookie-authenticated write like any other: it needs our own (or a listed) Origin.
        if (!request.headers.origin) throw new Forbidden('cookie-authenticated requests that change state need an Origin header', 'origin_required');
        checkLoginOrigin(request);
        await repo.deleteLoginSession(session.id);
        await deps.control.publish({ kind: 'end_login', loginSessionId: session.id }).catch(() => undefined);
      }
    }
    reply.clearCookie(SESSION_COOKIE, cookieOptions);
    return reply.code(204).send();
  });

  const meRouteSchema = { summary: 'The signed-in user, organizations and active organization (for an API key: the key and its organization)', security: SECURITY.reader, response: withErrors({ 200: meSchema }) };
  app.get('/api/v1/auth/me', { onRequest: deps.auth.require(), schema: meRouteSchema }, async (request) => {
    const auth = authOf(request);
    if (auth.principal.type !== 'user') {
      const org = await repo.getOrg(auth.orgId);
      return { apiKey: { id: auth.principal.id, name: auth.principal.name, scopes: auth.scopes }, organization: org ?? null };
    }
    return meBody(repo, { id: auth.principal.id, email: auth.principal.email }, auth.orgId);
  });

  const cookieOnly = async (request: FastifyRequest) => {
    if (authOf(request).principal.type !== 'user') throw new Forbidden('only browser logins have an active organization', 'cookie_only');
  };
  const activeOrgSchema = { summary: 'Switch the active organization', security: SECURITY.cookie, body: activeOrgBody, response: withErrors({ 200: userMeSchema }) };
  app.put('/api/v1/auth/active-organization', { onRequest: [deps.auth.require(), cookieOnly], schema: activeOrgSchema }, async (request) => {
    const auth = authOf(request);
    if (auth.principal.type !== 'user') throw new Forbidden('only browser logins have an active organization', 'cookie_only');
    const body = request.body;
    const orgs = await repo.memberships(auth.principal.id);
    if (!orgs.some((o) => o.org_id === body.organizationId)) throw new Forbidden('you are not a member of that organization', 'not_a_member');
    await repo.setActiveOrg(auth.principal.loginSessionId, body.organizationId);
    return meBody(repo, { id: auth.principal.id, email: auth.principal.email }, body.organizationId);
  });
}
