// Finds tool-call fields (tool, action, server, session, latency, trace/request ids, level, time) in parsed JSON or logfmt records.
import { emptyHints, type Hints } from './hints.js';
import { exactIntegerText, parseJsonObject } from './json-message.js';
import { parseLatencyMs } from './latency.js';
import { normalizeLevel } from './levels.js';
import { parseLogfmtMessage } from './logfmt.js';
import { parseTimestamp } from './timestamps.js';
import { actionIn } from './outcomes.js';
import { traceIdFromTraceparent, xrayTraceId } from './trace-ids.js';
import { isObject } from '../../shared/input-safety.js';
import { SCAN_WINDOW, idString, ownValue, truncate } from './strings.js';

/** Nested objects deeper than this are not searched (the top level is depth 0). */
export const MAX_SEARCH_DEPTH = 6;
/** At most this many objects are searched per message. */
const MAX_SEARCH_OBJECTS = 500;
/** At most this many keys are enumerated per message while looking for nested objects. */
const MAX_SEARCH_KEYS = 20_000;
/** At most this many `message`/`msg` strings are tried as embedded JSON or logfmt per message. */
const MAX_EMBEDDED = 4;
/** Only the first this many items of an array are searched (objects among them, in order: the first match wins). */
export const MAX_ARRAY_ITEMS = 20;

/** Attributes read from one OTLP JSON key/value list. */
const MAX_ATTRIBUTES = 200;

const TOOL_KEYS = ['toolName', 'tool_name', 'tool'] as const;
/** Flat dotted keys (OpenTelemetry attributes written into JSON log lines). */
const DOTTED_TOOL_KEYS = ['tool.name', 'gen_ai.tool.name', 'mcp.tool.name'] as const;
/** `{primitive: "tool", primitive_name: "x"}` (Kong), `{mcp_primitive_type, mcp_primitive_name}` (Tyk), `{type, name}` (MXCP). */
const PRIMITIVE_KIND_KEYS = ['primitive', 'primitive_type', 'mcp_primitive_type', 'type'] as const;
const PRIMITIVE_NAME_KEYS = ['primitive_name', 'mcp_primitive_name', 'name'] as const;
const SERVER_KEYS = ['serverId', 'server_id', 'mcp_server', 'server', 'server_name', 'serverName'] as const;
const DOTTED_SERVER_KEYS = ['server.id', 'server.name', 'mcp.server.name'] as const;
const SESSION_KEYS = ['sessionId', 'session_id', 'session', 'mcp_session_id', 'mcp.session.id'] as const;
/** Milliseconds: `latency` is Kong's `ai.mcp.rpc[].latency`, `duration.ms` ContextForge's span attribute. */
const LATENCY_KEYS = ['latencyMs', 'latency_ms', 'duration_ms', 'durationMs', 'latency', 'duration.ms'] as const;
const TRACE_KEYS = ['traceId', 'trace_id', 'dd.trace_id'] as const;
const XRAY_KEYS = ['xray_trace_id', 'xrayTraceId', 'XrayTraceId', 'X-Amzn-Trace-Id', 'x-amzn-trace-id', '_X_AMZN_TRACE_ID'] as const;
/**
 * Powertools for AWS Lambda writes `function_request_id` (TypeScript, Python, Java; .NET in snake case by default, camel or
 * Pascal case when configured); the Python docs' injected-context example shows `lambda_request_id`.
 */
const REQUEST_KEYS = ['requestId', 'request_id', 'aws_request_id', 'awsRequestId', 'function_request_id', 'functionRequestId', 'FunctionRequestId', 'lambda_request_id'] as const;
const TOOL_CALL_ID_KEYS = ['gen_ai.tool.call.id', 'tool_call_id', 'toolCallId'] as const;
const METHOD_KEYS = ['mcp.method.name', 'mcp_method', 'method'] as const;
/** An MCP method name such as `tools/call` or `notifications/initialized` (not an HTTP method). */
const MCP_METHOD = /^[a-z][A-Za-z_]*(?:\/[A-Za-z_]+)+$/;
const LEVEL_KEYS = ['level', 'levelname', 'severity', 'log_level', 'loglevel', 'lvl', 'log.level'] as const;
const TIME_KEYS = ['timestamp', '@timestamp', 'time', 'ts'] as const;
const EMBEDDED_KEYS = new Set(['message', 'msg']);

interface Frame {
  obj: Record<string, unknown>;
  depth: number;
  /** The JSON text `obj` was parsed from, to recover big integers exactly; null for logfmt. */
  raw: string | null;
}

/** A string, number or bigint id from `obj[key]`, with unsafe integers recovered from the raw JSON text. */
function idAt(frame: Frame, obj: Record<string, unknown>, key: string): string | null {
  const value = ownValue(obj, key);
  const raw = frame.raw;
  return idString(value, raw ? (n) => exactIntegerText(raw, key, n) : undefined);
}

/** `obj[key]` as an id when it is a scalar, else `obj[key][sub]` for the first sub key present. */
function idOrNested(frame: Frame, obj: Record<string, unknown>, key: string, subKeys: readonly string[]): string | null {
  const value = ownValue(obj, key);
  if (isObject(value)) {
    for (const sub of subKeys) {
      const id = idAt(frame, value, sub);
      if (id !== null) return id;
    }
    return null;
  }
  return idAt(frame, obj, key);
}

function firstOf<K extends string>(keys: readonly K[], read: (key: K) => string | null): string | null {
  for (const key of keys) {
    const found = read(key);
    if (found !== null) return found;
  }
  return null;
}

/** The name of a `{primitive: "tool", primitive_name: ...}`-shaped record (only when the primitive is a tool). */
function primitiveToolIn(frame: Frame): string | null {
  const { obj } = frame;
  const kind = PRIMITIVE_KIND_KEYS.map((k) => ownValue(obj, k)).find((v) => typeof v === 'string');
  if (typeof kind !== 'string' || kind.trim().toLowerCase() !== 'tool') return null;
  return firstOf(PRIMITIVE_NAME_KEYS, (k) => idAt(frame, obj, k));
}

function toolIn(frame: Frame): string | null {
  const { obj } = frame;
  const named = firstOf(TOOL_KEYS, (k) => idOrNested(frame, obj, k, ['name']));
  if (named !== null) return named;
  const dotted = firstOf(DOTTED_TOOL_KEYS, (k) => idAt(frame, obj, k)) ?? primitiveToolIn(frame);
  if (dotted !== null) return dotted;
  // An MCP JSON-RPC request: {"method":"tools/call","params":{"name":"search",...}}.
  const params = ownValue(obj, 'params');
  if (ownValue(obj, 'method') === 'tools/call' && isObject(params)) return idAt(frame, params, 'name');
  return null;
}

function serverIn(frame: Frame): string | null {
  const { obj } = frame;
  return firstOf(SERVER_KEYS, (k) => idOrNested(frame, obj, k, ['id', 'name'])) ?? firstOf(DOTTED_SERVER_KEYS, (k) => idAt(frame, obj, k));
}

function sessionIn(frame: Frame): string | null {
  return firstOf(SESSION_KEYS, (k) => idOrNested(frame, frame.obj, k, ['id']));
}

function traceIn(frame: Frame): string | null {
  const { obj } = frame;
  const explicit = firstOf(TRACE_KEYS, (k) => idAt(frame, obj, k));
  if (explicit !== null) return explicit;
  const dd = ownValue(obj, 'dd');
  return isObject(dd) ? idAt(frame, dd, 'trace_id') : null;
}

function stringAt(obj: Record<string, unknown>, key: string): string | null {
  const value = ownValue(obj, key);
  return typeof value === 'string' ? value : null;
}

function methodIn(obj: Record<string, unknown>): string | null {
  for (const key of METHOD_KEYS) {
    const value = ownValue(obj, key);
    if (typeof value === 'string' && value.length <= 200 && MCP_METHOD.test(value)) return value;
  }
  return null;
}

function inspect(frame: Frame, h: Hints, unmapped: { word: string | null }): void {
  const { obj } = frame;
  h.toolName ??= toolIn(frame);
  if (h.action === null) {
    const { found, unmapped: word } = actionIn(obj);
    if (found) {
      h.action = found.action;
      h.actionWord = found.word;
    } else unmapped.word ??= word;
  }
  h.toolCallId ??= firstOf(TOOL_CALL_ID_KEYS, (k) => idAt(frame, obj, k));
  h.method ??= methodIn(obj);
  h.serverId ??= serverIn(frame);
  h.sessionId ??= sessionIn(frame);
  if (h.latencyMs === null) {
    for (const key of LATENCY_KEYS) {
      h.latencyMs = parseLatencyMs(ownValue(obj, key));
      if (h.latencyMs !== null) break;
    }
  }
  h.traceId ??= traceIn(frame);
  if (h.traceparentId === null) {
    const traceparent = stringAt(obj, 'traceparent');
    if (traceparent !== null) h.traceparentId = traceIdFromTraceparent(traceparent);
  }
  if (h.xrayTraceId === null) {
    for (const key of XRAY_KEYS) {
      const value = stringAt(obj, key);
      h.xrayTraceId = value === null ? null : xrayTraceId(value);
      if (h.xrayTraceId !== null) break;
    }
  }
  h.requestId ??= firstOf(REQUEST_KEYS, (k) => idAt(frame, obj, k));
}

/** The top-level level field (also `{"log":{"level":...}}`). */
function levelIn(obj: Record<string, unknown>): string | null {
  for (const key of LEVEL_KEYS) {
    const level = normalizeLevel(ownValue(obj, key));
    if (level !== null) return level;
  }
  const log = ownValue(obj, 'log');
  return isObject(log) ? normalizeLevel(ownValue(log, 'level')) : null;
}

/** OTLP JSON log records carry their time as nanoseconds since the epoch, written as a decimal string. */
const NANO_TIME_KEYS = ['timeUnixNano', 'observedTimeUnixNano'] as const;

function timestampIn(obj: Record<string, unknown>): Date | null {
  for (const key of TIME_KEYS) {
    const date = parseTimestamp(ownValue(obj, key));
    if (date !== null) return date;
  }
  for (const key of NANO_TIME_KEYS) {
    const value = ownValue(obj, key);
    const date = typeof value === 'string' && /^\d{1,20}$/.test(value) ? parseTimestamp(Number(BigInt(value) / 1_000_000n)) : null;
    if (date !== null) return date;
  }
  return null;
}

/**
 * An OTLP JSON attribute list (`[{"key": "gen_ai.tool.name", "value": {"stringValue": "x"}}, ...]`, what collectors
 * write for log records and spans) as a plain object of its scalar values; null when the array is anything else.
 */
function keyValueObject(items: unknown[]): Record<string, unknown> | null {
  if (items.length === 0) return null;
  const acc = Object.create(null) as Record<string, unknown>;
  let found = 0;
  for (const item of items.slice(0, MAX_ATTRIBUTES)) {
    const key = isObject(item) ? ownValue(item, 'key') : undefined;
    const value = isObject(item) ? ownValue(item, 'value') : undefined;
    if (typeof key !== 'string' || !isObject(value)) return null;
    const scalar = ['stringValue', 'intValue', 'doubleValue', 'boolValue'].map((k) => ownValue(value, k)).find((v) => v !== undefined);
    if (scalar === undefined || isObject(scalar) || Array.isArray(scalar)) continue;
    acc[key] = scalar;
    found++;
  }
  return found ? { ...acc } : null;
}

/** A `message` string that itself holds a JSON object or a logfmt line. */
function embedded(value: string): { obj: Record<string, unknown>; raw: string | null } | null {
  if (value.length > SCAN_WINDOW) return null;
  const json = parseJsonObject(value);
  if (json) return { obj: json, raw: value };
  const logfmt = parseLogfmtMessage(value);
  return logfmt ? { obj: logfmt, raw: null } : null;
}

/**
 * Searches a parsed record breadth-first (so shallower fields win) down to MAX_SEARCH_DEPTH levels of nested
 * objects, the objects among the first MAX_ARRAY_ITEMS items of arrays (in order: the first match wins), plus JSON or
 * logfmt held in `message`/`msg` strings. Level and timestamp
 * are only taken from the top level. `raw` is the JSON text the record came from (null for logfmt).
 * Within one object the spellings are tried in the documented order; for the action, the first word
 * that maps to the vocabulary wins, else the first word found is kept as rawAction.
 */
export function extractFromRecord(root: Record<string, unknown>, raw: string | null): Hints {
  const h = emptyHints();
  h.level = levelIn(root);
  h.timestamp = timestampIn(root);
  const unmapped: { word: string | null } = { word: null };
  const queue: Frame[] = [{ obj: root, depth: 0, raw }];
  let keysSeen = 0;
  let embeddedTried = 0;
  for (let next = 0; next < queue.length && next < MAX_SEARCH_OBJECTS; next++) {
    const frame = queue[next];
    inspect(frame, h, unmapped);
    if (frame.depth >= MAX_SEARCH_DEPTH || keysSeen >= MAX_SEARCH_KEYS) continue;
    for (const key of Object.keys(frame.obj)) {
      if (++keysSeen > MAX_SEARCH_KEYS) break;
      const value = frame.obj[key];
      if (isObject(value)) {
        queue.push({ obj: value, depth: frame.depth + 1, raw: frame.raw });
      } else if (Array.isArray(value)) {
        const attributes = keyValueObject(value);
        keysSeen += attributes ? Math.min(value.length, MAX_ATTRIBUTES) : Math.min(value.length, MAX_ARRAY_ITEMS);
        if (attributes) queue.push({ obj: attributes, depth: frame.depth + 1, raw: null });
        else for (const item of value.slice(0, MAX_ARRAY_ITEMS)) if (isObject(item)) queue.push({ obj: item, depth: frame.depth + 1, raw: frame.raw });
      } else if (typeof value === 'string' && EMBEDDED_KEYS.has(key) && embeddedTried < MAX_EMBEDDED) {
        embeddedTried++;
        const inner = embedded(value);
        if (inner) {
          queue.push({ obj: inner.obj, depth: frame.depth + 1, raw: inner.raw });
        }
      }
    }
  }
  if (h.action === null && unmapped.word !== null) h.rawAction = truncate(unmapped.word);
  return h;
}
