// /api/v1/mcp/*: an organization's upstream servers (secret header values write-only), ordered policy rules with a
// dry run, and its choice when the audit store is down.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import type { Db } from '../db/db.js';
import { SECURITY, withErrors } from '../http/route-schemas.js';
import { isIP } from 'node:net';
import type { OrgProxyConfigs } from './org-proxy-config.js';
import { compileCondition, compileRule, evaluateRule, RuleCompileError, type PolicyBounds } from './policy-engine.js';
import { requireProxyAdmin, requireProxyReader } from './proxy-admin-auth.js';
import { createRuleBody, dryRunAnswer, dryRunBody, putServerBody, reorderBody, ruleBody, ruleList, ruleParams, ruleView, serverIdSchema, serverList, serverParams, serverView, settingsBody } from './proxy-schemas.js';
import { deleteRule, insertRule, listRules, reorderRules, updateRule, type RuleRow } from './rules-repo.js';
import type { SecretBox } from './secrets-key.js';
import { hostOf, isSpecialAddress } from './upstream-address.js';
import { countUpstreams, deleteUpstream, getStoreDownPolicy, getUpstream, listUpstreams, lockOrgProxyConfig, putUpstream, setStoreDownPolicy, type StoredHeader, type UpstreamRow } from './upstream-repo.js';
import { Conflict, InvalidInput, NotFound } from '../shared/domain-errors.js';

export interface ProxyAdminDeps {
  db: Db;
  auth: Authenticator;
  configs: OrgProxyConfigs;
  box: SecretBox | null;
  bounds: PolicyBounds;
  maxServers: number;
  maxRules: number;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
  allowPrivateUpstreams: boolean;
}

const uuid = z.string().uuid();

function view(u: UpstreamRow) {
  return {
    serverId: u.serverId,
    url: u.url,
    endpoint: `/mcp/${u.serverId}`,
    headers: u.headers.map((h) => ('value' in h ? { name: h.name, value: h.value, secret: false } : { name: h.name, value: null, secret: true })),
    timeoutMs: u.timeoutMs,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  };
}

function checkCondition(condition: string, bounds: PolicyBounds): void {
  try {
    compileCondition(condition, bounds);
  } catch (err) {
    if (err instanceof RuleCompileError) throw new InvalidInput(err.message, [{ path: 'condition', message: err.message }]);
    throw err;
  }
}

export function registerProxyAdminRoutes(fastify: FastifyInstance, deps: ProxyAdminDeps) {
  const app = fastify.withTypeProvider<ZodTypeProvider>();
  const admin = requireProxyAdmin(deps.auth);
  const reader = requireProxyReader(deps.auth);
  const security = SECURITY.reader;

  function serverIdOf(raw: string): string {
    const r = serverIdSchema.safeParse(raw);
    if (!r.success) throw new NotFound('MCP server not found');
    return r.data;
  }

  app.get('/api/v1/mcp/servers', { onRequest: admin, schema: { summary: "The organization's upstream MCP servers (secret header values are never shown)", security, response: withErrors({ 200: serverList }) } }, async (request) => ({
    items: (await listUpstreams(deps.db, authOf(request).orgId, deps.maxServers)).map(view),
  }));

  app.get('/api/v1/mcp/servers/:serverId', { onRequest: admin, schema: { summary: 'One upstream MCP server', security, params: serverParams, response: withErrors({ 200: serverView }) } }, async (request) => {
    const u = await getUpstream(deps.db, authOf(request).orgId, serverIdOf(request.params.serverId));
    if (!u) throw new NotFound('MCP server not found');
    return view(u);
  });

  app.put(
    '/api/v1/mcp/servers/:serverId',
    { onRequest: admin, bodyLimit: 256 * 1024, schema: { summary: 'Register or change an upstream MCP server (201 when new); a secret header without a value keeps its stored value', security, params: serverParams, body: putServerBody, response: withErrors({ 200: serverView, 201: serverView }) } },
    async (request, reply) => {
      const orgId = authOf(request).orgId;
      const parsedId = serverIdSchema.safeParse(request.params.serverId);
      if (!parsedId.success) throw new InvalidInput('invalid server id', [{ path: 'serverId', message: parsedId.error.issues[0].message }]);
      const serverId = parsedId.data;
      const body = request.body;
      const host = hostOf(new URL(body.url));
      if (!deps.allowPrivateUpstreams && (host === 'localhost' || (isIP(host) && isSpecialAddress(host)))) {
        throw new InvalidInput('the URL names a loopback, private or link-local address (the operator may allow them with PROXY_ALLOW_PRIVATE_UPSTREAMS)', [{ path: 'url', message: 'address not allowed' }]);
      }
      const timeoutMs = Math.min(body.timeoutMs ?? deps.defaultTimeoutMs, deps.maxTimeoutMs);
      const { row, created } = await deps.db.transaction(async (tx) => {
        await lockOrgProxyConfig(tx, orgId);
        const existing = await getUpstream(tx, orgId, serverId, true);
        if (!existing && (await countUpstreams(tx, orgId)) >= deps.maxServers) throw new Conflict(`this organization has ${deps.maxServers} MCP servers (PROXY_MAX_SERVERS_PER_ORG); remove one first`);
        const headers: StoredHeader[] = body.headers.map((h, i) => {
          if (!h.secret) {
            if (h.value === undefined) throw new InvalidInput('a header that is not secret needs a value', [{ path: `headers.${i}.value`, message: 'required' }]);
            return { name: h.name, value: h.value };
          }
          if (h.value === undefined) {
            const kept = existing?.headers.find((e) => e.name.toLowerCase() === h.name.toLowerCase() && 'secret' in e);
            if (!kept) throw new InvalidInput(`secret header ${h.name} has no stored value to keep; send its value`, [{ path: `headers.${i}.value`, message: 'required' }]);
            return kept;
          }
          if (!deps.box) throw new InvalidInput('secret headers need PROXY_SECRETS_KEY to be configured on the service', [{ path: `headers.${i}.secret`, message: 'no secrets key' }]);
          return { name: h.name, secret: deps.box.seal(h.value, `${orgId}/${serverId}/${h.name.toLowerCase()}`) };
        });
        return putUpstream(tx, orgId, { serverId, url: body.url, headers, timeoutMs });
      });
      deps.configs.invalidate(orgId);
      return reply.code(created ? 201 : 200).send(view(row));
    },
  );

  app.delete('/api/v1/mcp/servers/:serverId', { onRequest: admin, schema: { summary: 'Remove an upstream MCP server', security, params: serverParams, response: withErrors({ 204: z.undefined() }) } }, async (request, reply) => {
    const orgId = authOf(request).orgId;
    if (!(await deleteUpstream(deps.db, orgId, serverIdOf(request.params.serverId)))) throw new NotFound('MCP server not found');
    deps.configs.invalidate(orgId);
    return reply.code(204).send();
  });

  app.get('/api/v1/mcp/rules', { onRequest: reader, schema: { summary: "The organization's policy rules in evaluation order (first match wins)", security, response: withErrors({ 200: ruleList }) } }, async (request) => ({
    items: await listRules(deps.db, authOf(request).orgId),
  }));

  app.post('/api/v1/mcp/rules', { onRequest: admin, bodyLimit: 256 * 1024, schema: { summary: 'Add a policy rule (at `position`, default last)', security, body: createRuleBody, response: withErrors({ 201: ruleView }) } }, async (request, reply) => {
    const orgId = authOf(request).orgId;
    const b = request.body;
    checkCondition(b.condition, deps.bounds);
    const row = await deps.db.transaction(async (tx) => {
      await lockOrgProxyConfig(tx, orgId);
      if ((await listRules(tx, orgId)).length >= deps.maxRules) throw new Conflict(`this organization has ${deps.maxRules} rules (PROXY_MAX_RULES_PER_ORG); remove one first`);
      return insertRule(tx, orgId, { name: b.name, condition: b.condition, action: b.action, reason: b.reason ?? null, enabled: b.enabled }, Math.min(b.position ?? deps.maxRules, deps.maxRules));
    });
    deps.configs.invalidate(orgId);
    return reply.code(201).send(row);
  });

  app.put('/api/v1/mcp/rules/:ruleId', { onRequest: admin, bodyLimit: 256 * 1024, schema: { summary: 'Change a policy rule', security, params: ruleParams, body: ruleBody, response: withErrors({ 200: ruleView }) } }, async (request) => {
    const orgId = authOf(request).orgId;
    if (!uuid.safeParse(request.params.ruleId).success) throw new NotFound('rule not found');
    const b = request.body;
    checkCondition(b.condition, deps.bounds);
    const row = await deps.db.transaction(async (tx) => {
      await lockOrgProxyConfig(tx, orgId);
      return updateRule(tx, orgId, request.params.ruleId, { name: b.name, condition: b.condition, action: b.action, reason: b.reason ?? null, enabled: b.enabled });
    });
    if (!row) throw new NotFound('rule not found');
    deps.configs.invalidate(orgId);
    return row;
  });

  app.delete('/api/v1/mcp/rules/:ruleId', { onRequest: admin, schema: { summary: 'Remove a policy rule', security, params: ruleParams, response: withErrors({ 204: z.undefined() }) } }, async (request, reply) => {
    const orgId = authOf(request).orgId;
    if (!uuid.safeParse(request.params.ruleId).success) throw new NotFound('rule not found');
    const gone = await deps.db.transaction(async (tx) => {
      await lockOrgProxyConfig(tx, orgId);
      return deleteRule(tx, orgId, request.params.ruleId);
    });
    if (!gone) throw new NotFound('rule not found');
    deps.configs.invalidate(orgId);
    return reply.code(204).send();
  });

  app.put('/api/v1/mcp/rule-order', { onRequest: admin, schema: { summary: 'Set the order of the policy rules (every rule id once)', security, body: reorderBody, response: withErrors({ 200: ruleList }) } }, async (request) => {
    const orgId = authOf(request).orgId;
    const ids = request.body.ruleIds;
    const items = await deps.db.transaction(async (tx) => {
      await lockOrgProxyConfig(tx, orgId);
      const current = await listRules(tx, orgId);
      const known = new Set(current.map((r) => r.ruleId));
      if (ids.length !== current.length || new Set(ids).size !== ids.length || ids.some((id) => !known.has(id))) {
        throw new InvalidInput('ruleIds must name every rule of the organization exactly once', [{ path: 'ruleIds', message: `expected the ${current.length} rule ids` }]);
      }
      await reorderRules(tx, orgId, ids);
      return listRules(tx, orgId);
    });
    deps.configs.invalidate(orgId);
    return { items };
  });

  app.post('/api/v1/mcp/rules/dry-run', { onRequest: reader, bodyLimit: 1024 * 1024, schema: { summary: 'What the rules (stored, or the ones given) decide for a described call, rule by rule; nothing is forwarded or stored', security, body: dryRunBody, response: withErrors({ 200: dryRunAnswer }) } }, async (request) => {
    const orgId = authOf(request).orgId;
    const { call, rules: given } = request.body;
    let rules: Pick<RuleRow, 'ruleId' | 'name' | 'condition' | 'action' | 'reason' | 'enabled'>[];
    if (given) {
      given.forEach((r, i) => {
        try {
          compileCondition(r.condition, deps.bounds);
        } catch (err) {
          if (err instanceof RuleCompileError) throw new InvalidInput(err.message, [{ path: `rules.${i}.condition`, message: err.message }]);
          throw err;
        }
      });
      rules = given.map((r, i) => ({ ruleId: r.ruleId ?? `given-${i}`, name: r.name, condition: r.condition, action: r.action, reason: r.reason ?? null, enabled: r.enabled }));
    } else rules = await listRules(deps.db, orgId);
    const facts = { tool: { name: call.toolName }, args: call.arguments, server: { id: call.serverId }, session: { id: call.sessionId }, key: call.key, client: call.client };
    let decided: { action: (typeof rules)[number]['action']; rule: { id: string; name: string } | null; reason: string | null } | null = null;
    const verdicts = rules.map((r) => {
      let compiled;
      try {
        compiled = compileRule(r, deps.bounds);
      } catch (err) {
        return { ruleId: r.ruleId, name: r.name, enabled: r.enabled, matched: false, error: (err as Error).message };
      }
      const v = r.enabled ? evaluateRule(compiled, facts) : { matched: false, error: null };
      if (v.matched && !decided) decided = { action: r.action, rule: { id: r.ruleId, name: r.name }, reason: r.reason ?? r.name };
      return { ruleId: r.ruleId, name: r.name, enabled: r.enabled, ...v };
    });
    const d = decided ?? { action: 'allow' as const, rule: null, reason: null };
    return { ...d, rules: verdicts };
  });

  app.get('/api/v1/mcp/settings', { onRequest: reader, schema: { summary: "The organization's proxy settings: storeDown = refuse (fail closed, default) or forward", security, response: withErrors({ 200: settingsBody }) } }, async (request) => ({
    storeDown: await getStoreDownPolicy(deps.db, authOf(request).orgId),
  }));

  app.put('/api/v1/mcp/settings', { onRequest: admin, bodyLimit: 16 * 1024, schema: { summary: "Set the organization's proxy settings", security, body: settingsBody, response: withErrors({ 200: settingsBody }) } }, async (request) => {
    const orgId = authOf(request).orgId;
    await setStoreDownPolicy(deps.db, orgId, request.body.storeDown);
    deps.configs.invalidate(orgId);
    return { storeDown: request.body.storeDown };
  });

}
