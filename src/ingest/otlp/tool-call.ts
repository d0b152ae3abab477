// Reads a tool call out of OTLP attributes (GenAI and MCP semantic conventions, Traceloop's MCP instrumentation).
import { mapAction, type Action } from '../normalize/index.js';
import { truncate } from '../normalize/strings.js';
import { stringAttr, textAttr, type Attributes } from './attributes.js';

/** The span or log attribute carrying an explicit policy decision (allow, deny, redact, flag, or a word mapping to one). */
export const ACTION_ATTRIBUTE = 'audit.action';

export const SPAN_KIND_SERVER = 2;
const KIND_NAMES = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

export function spanKindName(kind: number): string {
  return KIND_NAMES[kind] ?? 'unspecified';
}

/** True for a GenAI tool execution, an MCP `tools/call` (client or server side), or a Traceloop MCP tool span. */
export function isToolCall(attrs: Attributes): boolean {
  return (
    stringAttr(attrs, 'gen_ai.operation.name') === 'execute_tool' ||
    stringAttr(attrs, 'mcp.method.name') === 'tools/call' ||
    stringAttr(attrs, 'traceloop.span.kind') === 'tool'
  );
}

const NAME_TARGET = /^(?:tools\/call|execute_tool)\s+(\S.*)$/;
const TRACELOOP_NAME = /^(.+)\.tool$/;

/**
 * The tool's name: `gen_ai.tool.name`; else Traceloop's `traceloop.entity.name` on its tool spans; else the target of
 * the span name (`tools/call get_weather`, `execute_tool get_weather`, Traceloop's `get_weather.tool`).
 */
export function toolNameOf(attrs: Attributes, spanName: string | null): string | null {
  const named = stringAttr(attrs, 'gen_ai.tool.name');
  if (named) return truncate(named);
  if (stringAttr(attrs, 'traceloop.span.kind') === 'tool') {
    const entity = stringAttr(attrs, 'traceloop.entity.name');
    if (entity) return truncate(entity);
  }
  const name = spanName?.trim() ?? '';
  const target = NAME_TARGET.exec(name)?.[1] ?? TRACELOOP_NAME.exec(name)?.[1];
  return target ? truncate(target.trim()) : null;
}

/** `mcp.session.id`, else `gen_ai.conversation.id` (span or log attributes), else the resource's `mcp.session.id`. */
export function sessionIdOf(attrs: Attributes, resource: Attributes): string | null {
  const id = stringAttr(attrs, 'mcp.session.id') ?? stringAttr(attrs, 'gen_ai.conversation.id') ?? stringAttr(resource, 'mcp.session.id');
  return id ? truncate(id) : null;
}

/** `server.address`, with `:server.port` when there is one. */
function serverAddressOf(attrs: Attributes): string | null {
  const address = stringAttr(attrs, 'server.address');
  if (!address) return null;
  const port = textAttr(attrs, 'server.port');
  return truncate(port ? `${address}:${port}` : address);
}

/**
 * The MCP server's identity. A server span (and a log record) is emitted by the server itself: the resource's
 * `service.name`, else `server.address[:server.port]`. Any other span (client, internal) is emitted by the caller:
 * `server.address[:server.port]` only, never the caller's own service name.
 */
export function serverIdOf(attrs: Attributes, resource: Attributes, side: 'server' | 'caller'): string | null {
  if (side === 'server') {
    const service = stringAttr(resource, 'service.name');
    if (service) return truncate(service);
  }
  return serverAddressOf(attrs);
}

/** The explicit policy decision: `audit.action` mapped onto the vocabulary (an unknown word is kept as rawAction). */
export function explicitActionOf(attrs: Attributes): { action: Action | null; rawAction: string | null; present: boolean } {
  const word = Object.prototype.hasOwnProperty.call(attrs, ACTION_ATTRIBUTE) ? attrs[ACTION_ATTRIBUTE] : undefined;
  if (word === undefined || word === null) return { action: null, rawAction: null, present: false };
  return { ...mapAction(word), present: true };
}
