// Reading one MCP POST body: which JSON-RPC message it is, which protocol era, the tools/call in it, and the 2026-07-28
// request headers (Mcp-Method, Mcp-Name, MCP-Protocol-Version) checked against the body.
import type { IncomingHttpHeaders } from 'node:http';

/** Protocol revisions of the initialize era (sessions by Mcp-Session-Id); later ones carry their version per request. */
export const LEGACY_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_INFO_META = 'io.modelcontextprotocol/clientInfo';
/** A client may name its audit session in a tools/call's `_meta` under this key (see docs/proxy.md). */
export const AUDIT_SESSION_META = 'io.audit-stream/sessionId';

export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  HEADER_MISMATCH: -32020,
  /** Implementation-defined server errors (-32000..-32099) the proxy answers with. */
  PROXY_ERROR: -32000,
  DENIED: -32001,
  UPSTREAM_UNAVAILABLE: -32002,
  UPSTREAM_TIMEOUT: -32003,
  LIMITED: -32004,
  STORE_UNAVAILABLE: -32005,
} as const;

export type JsonRpcId = string | number | null;

export interface ToolCall {
  id: JsonRpcId;
  name: string;
  arguments: Record<string, unknown>;
  meta: Record<string, unknown> | null;
}

export type McpBody =
  | { kind: 'request'; id: JsonRpcId; method: string; params: Record<string, unknown> | null }
  | { kind: 'notification'; method: string; params: Record<string, unknown> | null }
  | { kind: 'response'; id: JsonRpcId }
  | { kind: 'batch'; methods: string[] }
  | { kind: 'invalid'; message: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function one(v: unknown): McpBody {
  if (!isObject(v) || v.jsonrpc !== '2.0') return { kind: 'invalid', message: 'not a JSON-RPC 2.0 message' };
  const params = v.params === undefined ? null : isObject(v.params) ? v.params : undefined;
  if ('method' in v) {
    if (typeof v.method !== 'string' || v.method.length === 0) return { kind: 'invalid', message: 'method must be a non-empty string' };
    if (params === undefined) return { kind: 'invalid', message: 'params must be an object' };
    if (!('id' in v)) return { kind: 'notification', method: v.method, params };
    if (!(typeof v.id === 'string' || (typeof v.id === 'number' && Number.isFinite(v.id)))) return { kind: 'invalid', message: 'id must be a string or a number' };
    return { kind: 'request', id: v.id, method: v.method, params };
  }
  if ('result' in v || 'error' in v) return { kind: 'response', id: (v.id as JsonRpcId) ?? null };
  return { kind: 'invalid', message: 'neither a request, a notification nor a response' };
}

/** The message of a parsed body (a batch array, allowed before 2025-06-18, is listed by its methods). */
export function readBody(value: unknown): McpBody {
  if (Array.isArray(value)) {
    if (value.length === 0) return { kind: 'invalid', message: 'an empty batch' };
    const methods: string[] = [];
    for (const item of value) {
      const m = one(item);
      if (m.kind === 'invalid') return m;
      if (m.kind === 'request' || m.kind === 'notification') methods.push(m.method);
    }
    return { kind: 'batch', methods };
  }
  return one(value);
}

/** The tools/call of a request, or an error message when its params are not a tools/call's. */
export function toolCallOf(body: Extract<McpBody, { kind: 'request' }>): ToolCall | string {
  const p = body.params ?? {};
  if (typeof p.name !== 'string' || p.name.length === 0) return 'tools/call needs params.name (a non-empty string)';
  if (p.arguments !== undefined && !isObject(p.arguments)) return 'tools/call params.arguments must be an object';
  return { id: body.id, name: p.name, arguments: (p.arguments as Record<string, unknown>) ?? {}, meta: isObject(p._meta) ? p._meta : null };
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The protocol version a request carries in its body's `_meta` (2026-07-28 and later), else undefined. */
export function bodyProtocolVersion(body: McpBody): string | undefined {
  if (body.kind !== 'request' && body.kind !== 'notification') return undefined;
  const meta = body.params?._meta;
  const v = isObject(meta) ? meta[PROTOCOL_VERSION_META] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** Whether a request is of the per-request era (2026-07-28): its body or its MCP-Protocol-Version header says so. */
export function isModern(headers: IncomingHttpHeaders, body: McpBody | null): boolean {
  if (body && bodyProtocolVersion(body) !== undefined) return true;
  const v = header(headers, 'mcp-protocol-version');
  return v !== undefined && !LEGACY_VERSIONS.includes(v.trim());
}

/** A header value in the Base64 sentinel form `=?base64?...?=` decoded; other values as they are. */
export function decodeHeaderValue(v: string): string | null {
  const m = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(v);
  if (!m) return /[^\x20-\x7e\t]/.test(v) ? null : v;
  return Buffer.from(m[1], 'base64').toString('utf8');
}

const NAMED_METHODS = new Set(['tools/call', 'resources/read', 'prompts/get']);

/**
 * The 2026-07-28 header checks (SEP-2243) a body-reading intermediary must make, or null when they pass: on a modern
 * request, MCP-Protocol-Version and Mcp-Method present and equal to the body's, and Mcp-Name for a named method; on any
 * request, an Mcp-Method or Mcp-Name that is sent must match the body.
 */
export function headerMismatch(headers: IncomingHttpHeaders, body: McpBody, modern: boolean): string | null {
  if (body.kind !== 'request' && body.kind !== 'notification') return null;
  const method = header(headers, 'mcp-method');
  const name = header(headers, 'mcp-name');
  const version = header(headers, 'mcp-protocol-version');
  const bodyVersion = bodyProtocolVersion(body);
  if (modern && body.kind === 'request') {
    if (version === undefined) return 'Header mismatch: MCP-Protocol-Version header is required';
    if (bodyVersion !== undefined && version.trim() !== bodyVersion) return `Header mismatch: MCP-Protocol-Version header value '${version}' does not match body value '${bodyVersion}'`;
    if (method === undefined) return 'Header mismatch: Mcp-Method header is required';
  }
  if (method !== undefined && method !== body.method) return `Header mismatch: Mcp-Method header value '${method}' does not match body value '${body.method}'`;
  if (NAMED_METHODS.has(body.method)) {
    const p = body.params ?? {};
    const target = typeof p.name === 'string' ? p.name : typeof p.uri === 'string' ? p.uri : undefined;
    if (name === undefined) {
      if (modern && body.kind === 'request' && target !== undefined) return 'Header mismatch: Mcp-Name header is required';
      return null;
    }
    const decoded = decodeHeaderValue(name);
    if (decoded === null) return 'Header mismatch: Mcp-Name header has invalid characters';
    if (decoded !== target) return `Header mismatch: Mcp-Name header value '${name.slice(0, 200)}' does not match body value '${String(target).slice(0, 200)}'`;
  }
  return null;
}

/** The client's name and version from a modern request's `_meta`, when given. */
export function clientInfoOf(meta: Record<string, unknown> | null): { name: string; version: string } | null {
  const info = meta?.[CLIENT_INFO_META];
  if (!isObject(info)) return null;
  return { name: typeof info.name === 'string' ? info.name.slice(0, 200) : '', version: typeof info.version === 'string' ? info.version.slice(0, 100) : '' };
}

/** A JSON-RPC error response body. */
export function jsonRpcError(id: JsonRpcId, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });
}
