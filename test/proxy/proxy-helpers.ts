// Provisioning for proxy tests: an organization with an mcp:call + mcp:admin key, upstream registration, rules, records.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { bearer, createOrg, http, type TestOrg } from '../helpers/app.js';

export const PROXY_SCOPES = ['events:read', 'ingest:write', 'sessions:write', 'mcp:call', 'mcp:admin'];

/** Settings every proxy suite uses: local upstreams allowed, a fixed secrets key (the real backend has no DATA_DIR key). */
export const PROXY_ENV = { PROXY_ALLOW_PRIVATE_UPSTREAMS: 'true', PROXY_SECRETS_KEY: randomBytes(32).toString('base64'), PROXY_CONFIG_CACHE_MS: '0' };

export function proxyOrg(baseUrl: string): Promise<TestOrg> {
  return createOrg(baseUrl, { scopes: PROXY_SCOPES });
}

export async function registerServer(baseUrl: string, org: TestOrg, serverId: string, url: string, extra: Record<string, unknown> = {}): Promise<void> {
  const r = await http(`${baseUrl}/api/v1/mcp/servers/${serverId}`, { method: 'PUT', headers: bearer(org.key), json: { url, ...extra } });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
}

export async function addRule(baseUrl: string, org: TestOrg, rule: { name: string; condition: string; action: string; reason?: string }): Promise<string> {
  const r = await http(`${baseUrl}/api/v1/mcp/rules`, { method: 'POST', headers: bearer(org.key), json: rule });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.ruleId;
}

export async function clearRules(baseUrl: string, org: TestOrg): Promise<void> {
  const list = await http(`${baseUrl}/api/v1/mcp/rules`, { headers: bearer(org.key) });
  for (const r of list.body.items) await http(`${baseUrl}/api/v1/mcp/rules/${r.ruleId}`, { method: 'DELETE', headers: bearer(org.key) });
}

/** The organization's stored tool calls from the proxy, oldest first. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function proxyCalls(baseUrl: string, org: TestOrg, filter: Record<string, string> = {}): Promise<any[]> {
  const q = new URLSearchParams({ type: 'tool_call', source: 'proxy', order: 'asc', limit: '1000', ...filter });
  const r = await http(`${baseUrl}/api/v1/audit-events?${q}`, { headers: bearer(org.key) });
  expect(r.status).toBe(200);
  return r.body.items;
}
