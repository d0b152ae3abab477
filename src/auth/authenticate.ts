// Resolves a request's credentials (API key or login cookie) to {orgId, principal, scopes}; the one auth hook of every route.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { AuthRepo, Role } from './auth-repo.js';
import { looksLikeApiKey, safeEqual, sha256Hex, type Scope } from './tokens.js';
import { Forbidden, Unauthenticated } from '../shared/domain-errors.js';

export const SESSION_COOKIE = 'audit_stream_session';

/** Scopes held by a cookie login: members read and operate sessions; admins also manage keys and settings. */
export type Permission = Scope | 'org:admin';

export type Principal =
  | { type: 'api_key'; id: string; name: string }
  | { type: 'user'; id: string; email: string; role: Role; loginSessionId: string };

export interface AuthContext {
  orgId: string;
  principal: Principal;
  scopes: Permission[];
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}

export interface AuthOptions {
  /** Permission the route needs. */
  scope?: Permission;
  /** Whether a login cookie is accepted (the ingest routes take API keys only). */
  cookie?: boolean;
  /** A header carrying the API key as is (lower case; a sender's own protocol header); default `Authorization: Bearer`. */
  keyHeader?: string;
}

export function describePrincipal(p: Principal): string {
  return p.type === 'api_key' ? `api_key:${p.name} (${p.id})` : `user:${p.email}`;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const TOUCH_INTERVAL_MS = 60_000;

export function createAuthenticator(config: Config, repo: AuthRepo) {
  const lastTouched = new Map<string, number>();

  function bearer(request: FastifyRequest, header: AuthOptions['keyHeader']): string | undefined {
    if (header !== undefined) {
      const v = request.headers[header];
      return typeof v === 'string' ? v.trim() : undefined;
    }
    const h = request.headers.authorization;
    if (!h) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
    if (!m) throw new Unauthenticated('Authorization header must be "Bearer <API key>"');
    return m[1];
  }

  async function fromApiKey(key: string): Promise<AuthContext> {
    if (!looksLikeApiKey(key)) throw new Unauthenticated('invalid API key');
    const hash = sha256Hex(key);
    const row = await repo.findApiKeyByHash(hash);
    if (!row || !safeEqual(row.key_hash, hash) || row.revoked_at) throw new Unauthenticated('invalid or revoked API key');
    const now = Date.now();
    if ((lastTouched.get(row.id) ?? 0) < now - TOUCH_INTERVAL_MS) {
      lastTouched.set(row.id, now);
      if (lastTouched.size > 10_000) lastTouched.clear();
      repo.touchApiKey(row.id).catch(() => undefined);
    }
    return { orgId: row.org_id, principal: { type: 'api_key', id: row.id, name: row.name }, scopes: row.scopes };
  }

  /** The login behind a session cookie and its active organization, or undefined when the cookie is absent. */
  async function fromCookie(request: FastifyRequest): Promise<AuthContext | undefined> {
    const token = request.cookies?.[SESSION_COOKIE];
    if (!token) return undefined;
    const session = await repo.findLoginSession(sha256Hex(token));
    if (!session || new Date(session.expires_at).getTime() <= Date.now()) throw new Unauthenticated('login session expired; sign in again');
    const memberships = await repo.memberships(session.user_id);
    const active = memberships.find((m) => m.org_id === session.active_org_id) ?? memberships[0];
    if (!active) throw new Forbidden('this user belongs to no organization', 'no_organization');
    const scopes: Permission[] = ['events:read', 'sessions:write'];
    if (active.role === 'admin') scopes.push('org:admin');
    return {
      orgId: active.org_id,
      principal: { type: 'user', id: session.user_id, email: session.email, role: active.role, loginSessionId: session.id },
      scopes,
    };
  }

  function checkOrigin(request: FastifyRequest): void {
    if (!UNSAFE.has(request.method)) return;
    const origin = request.headers.origin;
    if (!origin) throw new Forbidden('cookie-authenticated requests that change state need an Origin header', 'origin_required');
    const own = `${request.protocol}://${request.host}`;
    if (origin !== own && !config.CORS_ORIGINS.includes(origin)) throw new Forbidden(`origin ${origin} is not allowed`, 'origin_not_allowed');
  }

  /** Resolves credentials without enforcing a scope; throws 401 when there are none or they are bad. */
  async function resolve(request: FastifyRequest, opts: AuthOptions = {}): Promise<AuthContext> {
    const key = bearer(request, opts.keyHeader);
    if (key) return fromApiKey(key);
    if (opts.cookie !== false) {
      const ctx = await fromCookie(request);
      if (ctx) {
        checkOrigin(request);
        return ctx;
      }
    }
    throw new Unauthenticated(opts.cookie === false ? 'an API key is required (Authorization: Bearer ask_...)' : 'sign in or send an API key');
  }

  /** An onRequest hook that authenticates and checks the permission, setting request.auth (before any body is read). */
  function require(opts: AuthOptions = {}): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
    return async (request: FastifyRequest, _reply: FastifyReply) => {
      const ctx = await resolve(request, opts);
      if (opts.scope && !ctx.scopes.includes(opts.scope)) {
        throw new Forbidden(`missing permission ${opts.scope}`, 'missing_scope');
      }
      request.auth = ctx;
    };
  }

  return { resolve, require, fromCookie };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;

export function authOf(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new Unauthenticated();
  return request.auth;
}
