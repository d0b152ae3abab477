// Authentication of proxied calls: the service's authenticator, its answer for a key reused for PROXY_AUTH_CACHE_MS
// (a call does not wait on a key lookup), and the last good answer kept for PROXY_AUTH_STALE_MS, used only while the
// database cannot be read (so an organization that chose `forward` keeps working through an outage). A revocation seen
// on the control channel, from any instance, drops the key's entry at once; one missed (Redis dropped it) lasts at most the cache time.
import { isStorageUnavailable } from '../db/db.js';
import type { FastifyRequest } from 'fastify';
import type { AuthContext, Authenticator } from '../auth/authenticate.js';
import type { ControlChannel } from '../bus/control-channel.js';
import { sha256Hex } from '../auth/tokens.js';
import { Forbidden } from '../shared/domain-errors.js';

export function createProxyAuth(opts: { auth: Authenticator; control: ControlChannel; cacheMs: number; staleMs: number; maxEntries?: number }) {
  const max = opts.maxEntries ?? 10_000;
  const known = new Map<string, { ctx: AuthContext; at: number }>();
  opts.control.on('revoke_key', (m) => {
    for (const [k, v] of known) if (v.ctx.principal.type === 'api_key' && v.ctx.principal.id === m.keyId) known.delete(k);
  });
  // Revocations broadcast while the channel was down were missed: every cached key is checked again.
  opts.control.onResubscribed(() => known.clear());

  function keyOf(request: FastifyRequest): string | null {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    return m ? sha256Hex(m[1]) : null;
  }

  /** onRequest hook: an API key with mcp:call (no cookies: agents call with keys). */
  return async (request: FastifyRequest) => {
    let ctx: AuthContext;
    const digest = keyOf(request);
    const fresh = digest ? known.get(digest) : undefined;
    if (fresh && Date.now() - fresh.at < opts.cacheMs) {
      if (!fresh.ctx.scopes.includes('mcp:call')) throw new Forbidden('missing permission mcp:call', 'missing_scope');
      request.auth = fresh.ctx;
      return;
    }
    try {
      ctx = await opts.auth.resolve(request, { cookie: false });
      if (digest) {
        known.delete(digest);
        known.set(digest, { ctx, at: Date.now() });
        if (known.size > max) known.delete(known.keys().next().value!);
      }
    } catch (err) {
      const hit = digest && isStorageUnavailable(err) ? known.get(digest) : undefined;
      if (!hit || Date.now() - hit.at > opts.staleMs) throw err;
      ctx = hit.ctx;
    }
    if (!ctx.scopes.includes('mcp:call')) throw new Forbidden('missing permission mcp:call', 'missing_scope');
    request.auth = ctx;
  };
}
