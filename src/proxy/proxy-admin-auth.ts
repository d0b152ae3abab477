// Who manages an organization's proxy configuration: its admins by login cookie, or an API key with `mcp:admin`.
import type { FastifyRequest } from 'fastify';
import type { Authenticator } from '../auth/authenticate.js';
import { Forbidden } from '../shared/domain-errors.js';

export function requireProxyAdmin(auth: Authenticator) {
  return async (request: FastifyRequest) => {
    const ctx = await auth.resolve(request);
    if (!ctx.scopes.includes('mcp:admin') && !ctx.scopes.includes('org:admin')) {
      throw new Forbidden('managing MCP servers and rules needs an organization admin login or a key with mcp:admin', 'missing_scope');
    }
    request.auth = ctx;
  };
}

/** Reading the configuration: also members (by cookie) and keys with events:read. */
export function requireProxyReader(auth: Authenticator) {
  return async (request: FastifyRequest) => {
    const ctx = await auth.resolve(request);
    if (!ctx.scopes.some((s) => s === 'mcp:admin' || s === 'org:admin' || s === 'events:read')) throw new Forbidden('missing permission events:read', 'missing_scope');
    request.auth = ctx;
  };
}
