// Finds tool-call fields (tool, action, server, session, latency, trace/request ids, level, time) in parsed JSON or logfmt records.
import { mapAction } from './actions.js';
import { emptyHints, type Hints } from './hints.js';
import { exactIntegerText, parseJsonObject } from './json-message.js';
import { parseLatencyMs } from './latency.js';
import { normalizeLevel } from './levels.js';
import { parseLogfmtMessage } from './logfmt.js';
import { parseTimestamp } from './timestamps.js';
import { traceIdFromTraceparent, xrayTraceId } from './trace-ids.js';
import { SCAN_WINDOW, idString, isRecord, ownValue, truncate } from './strings.js';

/** Nested objects deeper than this are not searched (the top level is depth 0). */
export const MAX_SEARCH_DEPTH = 6;
/** At most this many objects are searched per message. */
const MAX_SEARCH_OBJECTS = 500;
/** At most this many keys are enumerated per message while looking for nested objects. */
const MAX_SEARCH_KEYS = 20_000;
/** At most this many `message`/`msg` strings are tried as embedded JSON or logfmt per message. */
const MAX_EMBEDDED = 4;

const TOOL_KEYS = ['toolName', 'tool_name', 'tool'] as const;
const ACTION_KEYS = ['action', 'decision', 'verdict', 'outcome'] as const;
const SERVER_KEYS = ['serverId', 'server_id', 'mcp_server', 'server'] as const;
const SESSION_KEYS = ['sessionId', 'session_id', 'session'] as const;
const LATENCY_KEYS = ['latencyMs', 'latency_ms', 'duration_ms', 'durationMs'] as const;
const TRACE_KEYS = ['traceId', 'trace_id', 'dd.trace_id'] as const;
const XRAY_KEYS = ['xray_trace_id', 'xrayTraceId', 'X-Amzn-Trace-Id', 'x-amzn-trace-id', '_X_AMZN_TRACE_ID'] as const;
const REQUEST_KEYS = ['requestId', 'request_id', 'aws_request_id', 'awsRequestId', 'function_request_id'] as const;
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
  if (isRecord(value)) {
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

function toolIn(frame: Frame): string | null {
  const { obj } = frame;
  const named = firstOf(TOOL_KEYS, (k) => idOrNested(frame, obj, k, ['name']));
  if (named !== null) return named;
  const dotted = idAt(frame, obj, 'tool.name');
  if (dotted !== null) return dotted;
  // An MCP JSON-RPC request: {"method":"tools/call","params":{"name":"search",...}}.
  const params = ownValue(obj, 'params');
  if (ownValue(obj, 'method') === 'tools/call' && isRecord(params)) return idAt(frame, params, 'name');
  return null;
}

function serverIn(frame: Frame): string | null {
  const { obj } = frame;
  return firstOf(SERVER_KEYS, (k) => idOrNested(frame, obj, k, ['id', 'name'])) ?? idAt(frame, obj, 'server.id') ?? idAt(frame, obj, 'server.name');
}

function sessionIn(frame: Frame): string | null {
  return firstOf(SESSION_KEYS, (k) => idOrNested(frame, frame.obj, k, ['id']));
}

function traceIn(frame: Frame): string | null {
  const { obj } = frame;
  const explicit = firstOf(TRACE_KEYS, (k) => idAt(frame, obj, k));
  if (explicit !== null) return explicit;
  const dd = ownValue(obj, 'dd');
  return isRecord(dd) ? idAt(frame, dd, 'trace_id') : null;
}

function stringAt(obj: Record<string, unknown>, key: string): string | null {
  const value = ownValue(obj, key);
  return typeof value === 'string' ? value : null;
}

function inspect(frame: Frame, h: Hints, unmapped: { word: string | null }): void {
  const { obj } = frame;
  h.toolName ??= toolIn(frame);
  if (h.action === null) {
    for (const key of ACTION_KEYS) {
      const value = ownValue(obj, key);
      if (value === undefined || isRecord(value) || Array.isArray(value)) continue;
      const mapped = mapAction(value);
      if (mapped.action !== null) {
        h.action = mapped.action;
        break;
      }
      unmapped.word ??= mapped.rawAction;
    }
  }
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
  return isRecord(log) ? normalizeLevel(ownValue(log, 'level')) : null;
}

function timestampIn(obj: Record<string, unknown>): Date | null {
  for (const key of TIME_KEYS) {
    const date = parseTimestamp(ownValue(obj, key));
    if (date !== null) return date;
  }
  return null;
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
 * objects, plus JSON or logfmt held in `message`/`msg` strings. Arrays are not searched. Level and timestamp
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
      if (isRecord(value)) {
        queue.push({ obj: value, depth: frame.depth + 1, raw: frame.raw });
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
