// The neutral view of one record that profiles read: every source (OTLP spans and log records, CloudWatch, Firehose,
// Datadog, raw JSON) is turned into this shape before recognition, and it is bounded once, here.
import { isObject } from '../../shared/input-safety.js';
import { setOwn } from '../../shared/own-keys.js';

export type RecordKind = 'span' | 'log' | 'message';

/** One record as profiles see it. Every map is plain JSON data; absent parts are empty maps, '' or null. */
export interface RecordView {
  /** The ingest source (`otlp`, `cloudwatch`, `firehose`, `datadog`, `raw`). */
  source: string;
  kind: RecordKind;
  /** CloudWatch/Firehose log group, Datadog service; '' when none. */
  logGroup: string;
  /** Span name, log record event name, or a message's own event name; '' when none. */
  name: string;
  /** Instrumentation scope name (OTLP); '' otherwise. */
  scope: string;
  resource: Record<string, unknown>;
  /** Span or log attributes (OTLP), or the parsed fields of a JSON/logfmt message. */
  attributes: Record<string, unknown>;
  /** The log body or message: a string, a JSON value, or null. */
  body: unknown;
  /** Span timing and identity; zeros and '' when not a span or unknown. */
  span: { traceId: string; spanId: string; startMs: number; endMs: number; durationMs: number; status: string; kindName: string };
  /** Log record timing: the emitter's time and the collector's observed time in ms (0 when absent), its severity. */
  log: { timeMs: number; observedMs: number; severity: string; traceId: string; spanId: string };
  /** When the service received the record (ms), the fallback time. */
  receivedMs: number;
  /** The CEL variables of this record, made once by the first expression evaluated on it (compile-profile.ts). */
  bindings?: Record<string, never>;
}

/** Bounds of what one view holds for expressions: keys per map, items per list, nesting, characters per string. */
export const VIEW_LIMITS = { maxKeys: 256, maxItems: 64, maxDepth: 8, maxStringChars: 64 * 1024 } as const;

/**
 * A copy of `value` within VIEW_LIMITS: the first maxKeys keys of each map, the first maxItems items of each list,
 * nesting cut at maxDepth (deeper values become null), strings cut at maxStringChars. One walk over the kept part, so
 * an expression never iterates more than these per collection.
 */
export function boundedValue(value: unknown, depth = 0): unknown {
  // Most records are within the limits already: shared as they are (expressions never change what they read).
  if (withinLimits(value, depth)) return value;
  return copyWithin(value, depth);
}

/** Whether `value` is plain JSON data within VIEW_LIMITS from `depth` on (a walk that allocates nothing). */
function withinLimits(value: unknown, depth: number): boolean {
  if (typeof value === 'string') return value.length <= VIEW_LIMITS.maxStringChars;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return true;
  if (depth >= VIEW_LIMITS.maxDepth) return false;
  if (Array.isArray(value)) {
    if (value.length > VIEW_LIMITS.maxItems) return false;
    for (const v of value) if (!withinLimits(v, depth + 1)) return false;
    return true;
  }
  if (!isObject(value) || Object.getPrototypeOf(value) !== Object.prototype) return false;
  let n = 0;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) return false;
    if (++n > VIEW_LIMITS.maxKeys) return false;
    const v = value[key];
    if (v === undefined || !withinLimits(v, depth + 1)) return false;
  }
  return true;
}

function copyWithin(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return value.length > VIEW_LIMITS.maxStringChars ? value.slice(0, VIEW_LIMITS.maxStringChars) : value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (typeof value === 'bigint') return Number(value);
  if (depth >= VIEW_LIMITS.maxDepth) return null;
  if (Array.isArray(value)) return value.slice(0, VIEW_LIMITS.maxItems).map((v) => boundedValue(v, depth + 1));
  if (isObject(value)) return boundedMap(value, depth);
  return null;
}

export function boundedMap(obj: Record<string, unknown>, depth = 0): Record<string, unknown> {
  if (withinLimits(obj, depth)) return obj;
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const key in obj) {
    if (!Object.prototype.hasOwnProperty.call(obj, key)) continue;
    if (++n > VIEW_LIMITS.maxKeys) break;
    const v = obj[key];
    if (v === undefined) continue;
    setOwn(out, key, boundedValue(v, depth + 1));
  }
  return out;
}

const NO_SPAN: RecordView['span'] = { traceId: '', spanId: '', startMs: 0, endMs: 0, durationMs: 0, status: '', kindName: '' };
const NO_LOG: RecordView['log'] = { timeMs: 0, observedMs: 0, severity: '', traceId: '', spanId: '' };

/** A view with every part empty, to build the others from. */
export function emptyView(source: string, kind: RecordKind, receivedMs: number): RecordView {
  return { source, kind, logGroup: '', name: '', scope: '', resource: {}, attributes: {}, body: null, span: { ...NO_SPAN }, log: { ...NO_LOG }, receivedMs };
}

/**
 * The view of a log message (CloudWatch, Firehose, Datadog, raw line): its parsed fields (JSON object or logfmt pairs,
 * {} for text) as attributes, the text as body, the event name from a common `event`/`event.name` field when present.
 */
export function messageView(input: {
  source: string;
  logGroup?: string | null;
  message: string | null;
  fields?: Record<string, unknown> | null;
  timeMs?: number | null;
  receivedMs: number;
}): RecordView {
  const view = emptyView(input.source, 'message', input.receivedMs);
  view.logGroup = input.logGroup ?? '';
  view.attributes = input.fields ? boundedMap(input.fields) : {};
  view.body = input.message === null ? null : boundedValue(input.message);
  view.log.timeMs = input.timeMs ?? 0;
  const event = view.attributes['event.name'] ?? view.attributes.event ?? view.attributes.hook_event_name;
  view.name = typeof event === 'string' ? event : '';
  return view;
}
