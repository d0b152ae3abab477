// /mcp/:serverId: the MCP Streamable HTTP endpoint of each registered upstream. Everything but tools/call is relayed
// unchanged; a tools/call gets its action first (suspended session, then the organization's rules), an intent written
// before it is forwarded, and its record once it completes. Errors are answered as JSON-RPC errors.
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import { authOf } from '../auth/authenticate.js';
import type { Db } from '../db/db.js';
import { toErrorResponse } from '../http/error-handler.js';
import { isStorageUnavailable } from '../db/db.js';
import { storable } from '../shared/input-safety.js';
import { SECURITY } from '../http/route-schemas.js';
import { auditSessionOf } from './audit-session.js';
import { sessionStatus } from './call-intents-repo.js';
import { storedArguments, type CallCompletion, type CallFacts } from './call-record.js';
import type { CallRecorder } from './call-recorder.js';
import { bodyProtocolVersion, clientInfoOf, headerMismatch, isModern, JSONRPC, jsonRpcError, readBody, toolCallOf, type JsonRpcId, type McpBody } from './mcp-message.js';
import type { OrgProxyConfig, OrgProxyConfigs, ResolvedUpstream } from './org-proxy-config.js';
import { decide } from './policy-engine.js';
import type { ProxyLimiter, Slot } from './proxy-limits.js';
import { relay, type RelayResult } from './relay.js';
import { createResponseWatcher } from './response-watcher.js';
import type { UpstreamClient } from './upstream-client.js';
import { NotFound } from '../shared/domain-errors.js';

export interface McpRouteSettings {
  maxBodyBytes: number;
  drainTimeoutMs: number;
  maxInspectedBytes: number;
  storedArgumentsBytes: number;
  sweepGraceMs: number;
}

export interface McpRouteDeps {
  db: Db;
  /** The onRequest hook authenticating an API key with mcp:call. */
  authenticate: (request: FastifyRequest) => Promise<void>;
  configs: OrgProxyConfigs;
  upstreams: UpstreamClient;
  limiter: ProxyLimiter;
  recorder: CallRecorder;
  logger: Logger;
  settings: McpRouteSettings;
}

/** A JSON-RPC error the proxy answers (an HTTP status, a JSON-RPC code, the request's id). */
export class McpAnswer extends Error {
  constructor(
    public readonly status: number,
    public readonly rpcCode: number,
    message: string,
    public readonly id: JsonRpcId = null,
    public readonly retryAfter?: number,
  ) {
    super(message);
  }
}

const DECISION_META = 'io.audit-stream/decision';

function rpcCodeOfStatus(status: number): number {
  if (status === 429) return JSONRPC.LIMITED;
  if (status === 503) return JSONRPC.STORE_UNAVAILABLE;
  if (status === 400 || status === 413 || status === 415) return JSONRPC.INVALID_REQUEST;
  return JSONRPC.PROXY_ERROR;
}

/** Writes a JSON-RPC error on a hijacked response (nothing when the client is gone or an answer began). */
function writeRpcError(res: ServerResponse, a: McpAnswer): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (a.retryAfter !== undefined) headers['retry-after'] = String(a.retryAfter);
  res.writeHead(a.status, headers);
  res.end(jsonRpcError(a.id, a.rpcCode, a.message));
}

/** The answer to a denied call: a tool result with isError (shown to the model and the user), naming the reason. */
function deniedResult(id: JsonRpcId, facts: CallFacts, modern: boolean): string {
  const reason = facts.reason ?? 'denied by policy';
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    result: {
      ...(modern ? { resultType: 'complete' } : {}),
      content: [{ type: 'text', text: `Tool call denied by the audit-stream proxy: ${reason}` }],
      isError: true,
      _meta: { [DECISION_META]: { action: 'deny', rule: facts.rule, reason, callId: facts.callId } },
    },
  });
}

/** What a failed relay answers when nothing was written yet. */
function failureAnswer(r: RelayResult, id: JsonRpcId): McpAnswer | null {
  switch (r.failure) {
    case 'timeout':
      return new McpAnswer(504, JSONRPC.UPSTREAM_TIMEOUT, r.failureMessage ?? 'the upstream timed out', id);
    case 'unreachable':
      return new McpAnswer(502, JSONRPC.UPSTREAM_UNAVAILABLE, `the upstream MCP server is unreachable: ${r.failureMessage}`, id);
    case 'forbidden_address':
      return new McpAnswer(502, JSONRPC.UPSTREAM_UNAVAILABLE, r.failureMessage ?? 'the upstream address is not allowed', id);
    default:
      return null;
  }
}

/** An upstream refusing the credentials registered for it is the registration's fault, not the client's key: 502. */
function refusedCredentials(res: ServerResponse, id: JsonRpcId) {
  return (head: { statusCode?: number }) => {
    if (head.statusCode !== 401 && head.statusCode !== 403) return false;
    writeRpcError(res, new McpAnswer(502, JSONRPC.UPSTREAM_UNAVAILABLE, `the upstream refused the credentials registered for it (HTTP ${head.statusCode}); an organization admin must update the server's headers`, id));
    return true;
  };
}

export function registerMcpRoutes(app: FastifyInstance, deps: McpRouteDeps) {
  const s = deps.settings;
  const log = deps.logger.child({ component: 'mcp-proxy' });

  async function upstreamOf(request: FastifyRequest): Promise<{ config: OrgProxyConfig; upstream: ResolvedUpstream }> {
    const { serverId } = request.params as { serverId: string };
    const config = await deps.configs.get(authOf(request).orgId);
    const upstream = config.servers.get(serverId);
    if (!upstream) throw new NotFound(`no MCP server ${JSON.stringify(serverId.slice(0, 200))} is registered in this organization`);
    return { config, upstream };
  }

  function keyOf(request: FastifyRequest): { id: string; name: string } {
    const p = authOf(request).principal;
    return p.type === 'api_key' ? { id: p.id, name: p.name } : { id: p.id, name: p.email };
  }

  function takeRequestSlot(request: FastifyRequest): Slot {
    const slot = deps.limiter.request(keyOf(request).id);
    if (!slot) throw new McpAnswer(429, JSONRPC.LIMITED, 'this API key has too many requests in flight through the proxy (PROXY_MAX_REQUESTS_PER_KEY)', null, 1);
    return slot;
  }

  /** Relays a request that is not a tools/call; a long-lived stream takes a stream slot. */
  async function relayPlain(request: FastifyRequest, reply: FastifyReply, upstream: ResolvedUpstream, method: 'GET' | 'POST' | 'DELETE', body: Buffer | undefined, id: JsonRpcId, stream: boolean): Promise<void> {
    let streamSlot: Slot | null = null;
    if (stream) {
      const s2 = deps.limiter.stream(keyOf(request).id);
      if (typeof s2 === 'string') throw new McpAnswer(429, JSONRPC.LIMITED, s2, id, 5);
      streamSlot = s2;
    }
    reply.hijack();
    try {
      const r = await relay(deps.upstreams, {
        upstream,
        method,
        clientHeaders: request.headers,
        body,
        res: reply.raw,
        timeoutMs: stream ? null : upstream.timeoutMs,
        drainTimeoutMs: s.drainTimeoutMs,
        onHead: refusedCredentials(reply.raw, id),
      });
      const answer = r.answered ? null : failureAnswer(r, id);
      if (answer) writeRpcError(reply.raw, answer);
      if (r.answered && r.failure && !reply.raw.writableEnded) reply.raw.destroy();
    } finally {
      streamSlot?.();
    }
  }

  async function toolCall(request: FastifyRequest, reply: FastifyReply, ctx: { config: OrgProxyConfig; upstream: ResolvedUpstream; body: Buffer; msg: Extract<McpBody, { kind: 'request' }>; modern: boolean }): Promise<void> {
    const { msg, upstream, config, modern } = ctx;
    const auth = authOf(request);
    const call = toolCallOf(msg);
    if (typeof call === 'string') throw new McpAnswer(400, JSONRPC.INVALID_PARAMS, call, msg.id);
    const key = keyOf(request);
    const clientInfo = clientInfoOf(call.meta);
    const ua = request.headers['user-agent'];
    const client = { name: clientInfo?.name ?? '', version: clientInfo?.version ?? '', userAgent: typeof ua === 'string' ? ua.slice(0, 200) : '' };
    const session = auditSessionOf({ meta: call.meta, headers: request.headers, keyId: key.id, clientName: client.name });
    if ('error' in session) throw new McpAnswer(400, JSONRPC.INVALID_PARAMS, session.error, msg.id);
    const slot = deps.limiter.call(key.id, auth.orgId, session.id);
    if (typeof slot === 'string') throw new McpAnswer(429, JSONRPC.LIMITED, slot, msg.id, 1);
    const recording = deps.recorder.begin();
    try {
      const argsJson = JSON.stringify(call.arguments);
      const decision = decide(config.rules, { tool: { name: call.name }, args: call.arguments, server: { id: upstream.serverId }, session: { id: session.id }, key, client });
      // Text Postgres cannot hold (NUL, lone surrogates) replaced in what is stored; the call is forwarded as sent.
      const facts: CallFacts = storable({
        callId: randomUUID(),
        serverId: upstream.serverId,
        sessionId: session.id,
        sessionSource: session.source,
        toolName: call.name.slice(0, 200),
        jsonrpcId: msg.id,
        protocolVersion: bodyProtocolVersion(msg) ?? (typeof request.headers['mcp-protocol-version'] === 'string' ? request.headers['mcp-protocol-version'].slice(0, 40) : null),
        era: modern ? 'modern' : 'legacy',
        key,
        client,
        action: decision.action,
        rule: decision.rule,
        reason: decision.reason,
        ruleErrors: decision.errors,
        argumentsBytes: Buffer.byteLength(argsJson),
        arguments: storedArguments(call.arguments, argsJson, decision.action, s.storedArgumentsBytes),
        startedAt: new Date().toISOString(),
      });

      const deny = async (suspended: boolean) => {
        if (suspended) Object.assign(facts, { action: 'deny', rule: null, reason: 'session suspended' });
        await deps.recorder.record(auth.orgId, facts, { outcome: 'denied', latencyMs: 0, resultBytes: null }, false);
        reply.hijack();
        reply.raw.writeHead(200, { 'content-type': 'application/json' });
        reply.raw.end(deniedResult(msg.id, facts, modern));
      };

      if (decision.action === 'deny') {
        // A suspended session's call is denied as suspended, whatever the rules say.
        const status = await sessionStatus(deps.db, auth.orgId, session.id).catch(() => null);
        return await deny(status === 'suspended');
      }

      let hasIntent = true;
      try {
        if (!(await deps.recorder.writeIntent(auth.orgId, facts, upstream.timeoutMs + s.sweepGraceMs))) return await deny(true);
      } catch (err) {
        if (!isStorageUnavailable(err)) throw err;
        if (config.storeDown !== 'forward') {
          log.warn({ err: { message: (err as Error).message }, orgId: auth.orgId, serverId: upstream.serverId }, 'tool call refused: its intent could not be stored (fail closed)');
          throw new McpAnswer(503, JSONRPC.STORE_UNAVAILABLE, 'the audit store is unavailable, so the call was not forwarded (this organization fails closed); retry later', msg.id, 5);
        }
        hasIntent = false;
        log.warn({ err: { message: (err as Error).message }, orgId: auth.orgId }, 'tool call forwarded while the audit store is unavailable (the organization chose forward)');
      }

      reply.hijack();
      const started = performance.now();
      let answeredAt: number | null = null;
      const r = await relay(deps.upstreams, {
        upstream,
        method: 'POST',
        clientHeaders: request.headers,
        body: ctx.body,
        res: reply.raw,
        timeoutMs: upstream.timeoutMs,
        drainTimeoutMs: s.drainTimeoutMs,
        onHead: refusedCredentials(reply.raw, msg.id),
        watch: (contentType) => {
          const w = createResponseWatcher(contentType, msg.id, s.maxInspectedBytes);
          return {
            push(chunk: Buffer) {
              w.push(chunk);
              if (answeredAt === null && w.outcome) answeredAt = performance.now();
            },
            finish() {
              w.finish();
              if (answeredAt === null && w.outcome) answeredAt = performance.now();
            },
            get outcome() {
              return w.outcome;
            },
            get unread() {
              return w.unread;
            },
          };
        },
      });
      const seen = r.watcher?.outcome ?? null;
      let completion: CallCompletion;
      const latencyMs = Math.round((answeredAt ?? performance.now()) - started);
      if (seen) completion = { outcome: seen.kind, latencyMs, resultBytes: seen.resultBytes, error: seen.kind === 'jsonrpc_error' ? seen.error : null };
      else if (r.failure === 'timeout') completion = { outcome: 'timeout', latencyMs, resultBytes: null };
      else if (r.failure === 'cancelled') completion = { outcome: 'cancelled', latencyMs, resultBytes: null };
      else if (r.failure === 'unreachable' || r.failure === 'forbidden_address') completion = { outcome: 'upstream_unreachable', latencyMs, resultBytes: null, error: { code: null, message: r.failureMessage ?? '' } };
      else if (r.status !== null && (r.status >= 400 || r.status === 202)) completion = { outcome: 'upstream_http_error', latencyMs, resultBytes: null };
      else if (r.watcher && r.watcher.unread > 0) completion = { outcome: 'unread', latencyMs, resultBytes: null };
      else completion = { outcome: 'no_response', latencyMs, resultBytes: null };
      completion.upstreamStatus = r.status;
      if (!hasIntent) completion.forwardedWhileStoreDown = true;

      const answer = r.answered ? null : failureAnswer(r, msg.id);
      if (answer) writeRpcError(reply.raw, answer);
      else if (r.answered && r.failure && !reply.raw.writableEnded) {
        // The response had begun: an SSE stream gets the call's error as its last message, anything else is cut.
        const sse = String(reply.raw.getHeader('content-type') ?? '').startsWith('text/event-stream');
        if (sse && !seen && r.failure !== 'cancelled' && !reply.raw.destroyed) {
          const code = r.failure === 'timeout' ? JSONRPC.UPSTREAM_TIMEOUT : JSONRPC.UPSTREAM_UNAVAILABLE;
          reply.raw.end(`event: message\ndata: ${jsonRpcError(msg.id, code, r.failureMessage ?? 'the upstream failed')}\n\n`);
        } else reply.raw.destroy();
      }
      await deps.recorder.record(auth.orgId, facts, completion, hasIntent);
    } finally {
      slot();
      recording();
    }
  }

  async function handlePost(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { upstream, config } = await upstreamOf(request);
    const body = request.body;
    if (!Buffer.isBuffer(body) || body.length === 0) throw new McpAnswer(400, JSONRPC.PARSE_ERROR, 'the body must be a JSON-RPC message');
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw new McpAnswer(400, JSONRPC.PARSE_ERROR, `the body is not valid JSON: ${(err as Error).message.slice(0, 200)}`);
    }
    const msg = readBody(parsed);
    if (msg.kind === 'invalid') throw new McpAnswer(400, JSONRPC.INVALID_REQUEST, msg.message);
    const id = msg.kind === 'request' || msg.kind === 'response' ? msg.id : null;
    const modern = isModern(request.headers, msg);
    const mismatch = headerMismatch(request.headers, msg, modern);
    if (mismatch) throw new McpAnswer(400, JSONRPC.HEADER_MISMATCH, mismatch, id);
    if (msg.kind === 'batch' && msg.methods.includes('tools/call')) {
      throw new McpAnswer(400, JSONRPC.INVALID_REQUEST, 'a tools/call must be sent alone, not in a JSON-RPC batch, through the audit-stream proxy');
    }
    const slot = takeRequestSlot(request);
    try {
      if (msg.kind === 'request' && msg.method === 'tools/call') return await toolCall(request, reply, { config, upstream, body, msg, modern });
      const stream = msg.kind === 'request' && msg.method === 'subscriptions/listen';
      await relayPlain(request, reply, upstream, 'POST', body, id, stream);
    } finally {
      slot();
    }
  }

  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: s.maxBodyBytes }, (_request, body, done) => done(null, body));
    scope.setErrorHandler((err: unknown, request, reply) => {
      if (reply.sent || reply.raw.headersSent) return;
      let answer: McpAnswer;
      if (err instanceof McpAnswer) answer = err;
      else {
        const { body, retryAfter } = toErrorResponse(err);
        if (body.statusCode >= 500) request.log.error({ err }, 'proxy request failed');
        answer = new McpAnswer(body.statusCode, rpcCodeOfStatus(body.statusCode), body.message, null, retryAfter);
      }
      if (reply.raw.headersSent) return;
      if (answer.retryAfter !== undefined) void reply.header('Retry-After', String(answer.retryAfter));
      void reply.code(answer.status).type('application/json').send(jsonRpcError(answer.id, answer.rpcCode, answer.message));
    });
    const onRequest = deps.authenticate;
    const params = z.object({ serverId: z.string() });
    const schema = (summary: string) => ({ summary, security: SECURITY.apiKey, params, response: { default: { description: 'a JSON-RPC message, or an SSE stream of them', content: { 'application/json': { schema: z.unknown() } } } } });

    scope.post('/mcp/:serverId', { onRequest, bodyLimit: s.maxBodyBytes, schema: schema('MCP Streamable HTTP endpoint of a registered upstream server (key with mcp:call); tools/call gets the policy action and is recorded') }, handlePost);
    scope.get('/mcp/:serverId', { onRequest, schema: schema("The upstream's GET stream (2025-11-25 sessions), relayed") }, async (request, reply) => {
      const { upstream } = await upstreamOf(request);
      const slot = takeRequestSlot(request);
      try {
        await relayPlain(request, reply, upstream, 'GET', undefined, null, true);
      } finally {
        slot();
      }
    });
    scope.delete('/mcp/:serverId', { onRequest, schema: schema('Ends a 2025-11-25 MCP session at the upstream, relayed') }, async (request, reply) => {
      const { upstream } = await upstreamOf(request);
      const slot = takeRequestSlot(request);
      try {
        await relayPlain(request, reply, upstream, 'DELETE', undefined, null, false);
      } finally {
        slot();
      }
    });
  });
}

