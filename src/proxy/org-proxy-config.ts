// Each organization's proxy configuration (servers with their headers opened, compiled rules, store-down policy), read
// once per PROXY_CONFIG_CACHE_MS per instance; the last good copy serves while the database cannot be read.
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import { compileRule, type CompiledRule, type PolicyBounds, type PolicyRule } from './policy-engine.js';
import { listRules } from './rules-repo.js';
import type { SecretBox } from './secrets-key.js';
import { getStoreDownPolicy, listUpstreams, type StoreDownPolicy, type UpstreamRow } from './upstream-repo.js';

/** An upstream ready to forward to: its headers in the clear (never logged, never answered). */
export interface ResolvedUpstream {
  serverId: string;
  url: URL;
  headers: [string, string][];
  timeoutMs: number;
}

export interface OrgProxyConfig {
  servers: Map<string, ResolvedUpstream>;
  rules: CompiledRule[];
  storeDown: StoreDownPolicy;
}

export interface OrgProxyConfigDeps {
  db: Db;
  box: SecretBox | null;
  bounds: PolicyBounds;
  cacheMs: number;
  maxServers: number;
  upstreamTimeoutMaxMs: number;
  logger: Logger;
  /** Organizations whose configuration is kept at most (least recently used dropped). */
  maxOrgs?: number;
}

/** Rules compiled; one that no longer compiles (its bounds were lowered since) never matches and errors, saying why. */
export function compileRules(rules: readonly PolicyRule[], bounds: PolicyBounds): CompiledRule[] {
  return rules.map((r) => {
    try {
      return compileRule(r, bounds);
    } catch (err) {
      const message = `rule does not compile: ${(err as Error).message}`;
      return {
        ...r,
        evaluate: () => {
          throw new Error(message);
        },
      };
    }
  });
}

export function createOrgProxyConfigs(deps: OrgProxyConfigDeps) {
  const maxOrgs = deps.maxOrgs ?? 10_000;
  const cache = new Map<string, { config: OrgProxyConfig; loadedAt: number }>();
  const loading = new Map<string, Promise<OrgProxyConfig>>();

  function resolve(orgId: string, u: UpstreamRow): ResolvedUpstream | null {
    const headers: [string, string][] = [];
    for (const h of u.headers) {
      if ('value' in h) headers.push([h.name, h.value]);
      else if (deps.box) {
        try {
          headers.push([h.name, deps.box.open(h.secret, `${orgId}/${u.serverId}/${h.name.toLowerCase()}`)]);
        } catch {
          deps.logger.error({ orgId, serverId: u.serverId, header: h.name }, 'a secret header of this upstream cannot be opened with the configured PROXY_SECRETS_KEY; the server is unavailable');
          return null;
        }
      } else {
        deps.logger.error({ orgId, serverId: u.serverId }, 'this upstream has secret headers but no PROXY_SECRETS_KEY is configured; the server is unavailable');
        return null;
      }
    }
    return { serverId: u.serverId, url: new URL(u.url), headers, timeoutMs: Math.min(u.timeoutMs, deps.upstreamTimeoutMaxMs) };
  }

  async function load(orgId: string): Promise<OrgProxyConfig> {
    const [servers, rules, storeDown] = await Promise.all([listUpstreams(deps.db, orgId, deps.maxServers), listRules(deps.db, orgId), getStoreDownPolicy(deps.db, orgId)]);
    const map = new Map<string, ResolvedUpstream>();
    for (const s of servers) {
      const r = resolve(orgId, s);
      if (r) map.set(s.serverId, r);
    }
    return { servers: map, rules: compileRules(rules, deps.bounds), storeDown };
  }

  /** The organization's configuration: cached, or read now; while the database fails, the last copy read (if any). */
  async function get(orgId: string): Promise<OrgProxyConfig> {
    const hit = cache.get(orgId);
    if (hit && Date.now() - hit.loadedAt < deps.cacheMs) return hit.config;
    let pending = loading.get(orgId);
    if (!pending) {
      pending = load(orgId).finally(() => loading.delete(orgId));
      loading.set(orgId, pending);
    }
    try {
      const config = await pending;
      cache.delete(orgId);
      cache.set(orgId, { config, loadedAt: Date.now() });
      if (cache.size > maxOrgs) cache.delete(cache.keys().next().value!);
      return config;
    } catch (err) {
      if (hit) return hit.config;
      throw err;
    }
  }

  return {
    get,
    /** Forgets an organization's copy on this instance (after a change made here). */
    invalidate(orgId: string) {
      cache.delete(orgId);
    },
  };
}

export type OrgProxyConfigs = ReturnType<typeof createOrgProxyConfigs>;
