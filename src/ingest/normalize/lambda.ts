// Recognizes AWS Lambda log shapes: runtime line prefixes (timestamp, request id, level) and platform lines (START/END/REPORT...).
import { parseTimestamp } from './timestamps.js';
import { parseLatencyMs } from './latency.js';
import { SCAN_WINDOW, hasOwn, truncate } from './strings.js';
import { xrayTraceId } from './trace-ids.js';

export interface LambdaPrefix {
  timestamp: Date | null;
  requestId: string | null;
  level: string | null;
  /** The message after the prefix. */
  body: string;
}

const ISO_UTC = '\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d{1,9})?Z';
// Node.js: `2024-05-01T10:00:00.000Z\t<request id>\tINFO\t<message>` (the level is absent on old runtimes).
const NODE_PREFIX = new RegExp(`^(${ISO_UTC})\\t([^\\s]{1,256})\\t(?:(TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\\t)?`);
// Python: `[INFO]\t2024-05-01T10:00:00.000Z\t<request id>\t<message>`.
const PYTHON_PREFIX = new RegExp(`^\\[(NOTSET|DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\\]\\t(${ISO_UTC})\\t([^\\s]{1,256})\\t`);
const NO_REQUEST = new Set(['undefined', 'None', 'null', '-']);

/** Splits the runtime prefix off a Lambda function log line; null when the line has none. */
export function splitLambdaPrefix(message: string): LambdaPrefix | null {
  const head = message.slice(0, 400);
  const node = NODE_PREFIX.exec(head);
  if (node) {
    return {
      timestamp: parseTimestamp(node[1]),
      requestId: NO_REQUEST.has(node[2]) ? null : truncate(node[2]),
      level: node[3] ?? null,
      body: message.slice(node[0].length),
    };
  }
  const python = PYTHON_PREFIX.exec(head);
  if (python) {
    return {
      timestamp: parseTimestamp(python[2]),
      requestId: NO_REQUEST.has(python[3]) ? null : truncate(python[3]),
      level: python[1],
      body: message.slice(python[0].length),
    };
  }
  return null;
}

export interface LambdaPlatformLine {
  event: string;
  requestId: string | null;
  /** `Duration` of a REPORT line, rounded to whole milliseconds. */
  latencyMs: number | null;
  /** From `XRAY TraceId:`. */
  traceId: string | null;
  fields: Record<string, unknown>;
}

const PLATFORM = /^(START|END|REPORT|INIT_START|INIT_REPORT|RESTORE_START|RESTORE_REPORT|EXTENSION|TELEMETRY) ([A-Za-z][A-Za-z ]{0,40}):/;
const NEEDS_REQUEST_ID = new Set(['START', 'END', 'REPORT']);
const SEGMENT = /^([A-Za-z][A-Za-z ]{0,40}?):\s*(.*)$/s;
const MEASURE = /^(\d+(?:\.\d+)?)\s*(?:ms|MB)?$/;

const NUMBER_FIELDS: Readonly<Record<string, string>> = {
  Duration: 'durationMs',
  'Billed Duration': 'billedDurationMs',
  'Memory Size': 'memorySizeMb',
  'Max Memory Used': 'maxMemoryUsedMb',
  'Init Duration': 'initDurationMs',
  'Restore Duration': 'restoreDurationMs',
  'Billed Restore Duration': 'billedRestoreDurationMs',
};
const TEXT_FIELDS: Readonly<Record<string, string>> = {
  RequestId: 'requestId',
  Version: 'version',
  'XRAY TraceId': 'xrayTraceId',
  SegmentId: 'segmentId',
  Sampled: 'sampled',
  Status: 'status',
  'Error Type': 'errorType',
  'Runtime Version': 'runtimeVersion',
  'Runtime Version ARN': 'runtimeVersionArn',
  Phase: 'phase',
  Name: 'name',
  State: 'state',
  Events: 'events',
};

const REQUEST_ID_THEN_MORE = /^(\s*RequestId: *[^\s]+) +(\S.*)$/s;

/** Segments are separated by tabs or newlines, and on START lines by the space after the request id (`RequestId: <id> Version: $LATEST`). */
function segments(rest: string): string[] {
  const out: string[] = [];
  for (const part of rest.split(/\t|\r?\n/)) {
    const split = REQUEST_ID_THEN_MORE.exec(part);
    if (split) out.push(split[1], split[2]);
    else out.push(part);
  }
  return out;
}

function camelCase(name: string): string {
  const words = name.trim().split(/\s+/);
  return words.map((w, i) => (i === 0 ? w.charAt(0).toLowerCase() + w.slice(1) : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}

/**
 * Parses a Lambda platform line (`START RequestId: ...`, `END RequestId: ...`, `REPORT RequestId: ...\tDuration: 12.34 ms...`,
 * `INIT_START Runtime Version: ...`, ...) into its fields; null for any other line.
 */
export function parseLambdaPlatformLine(message: string): LambdaPlatformLine | null {
  const text = message.length > SCAN_WINDOW ? message.slice(0, SCAN_WINDOW) : message;
  const head = PLATFORM.exec(text.trimStart());
  if (!head) return null;
  const event = head[1];
  if (NEEDS_REQUEST_ID.has(event) && head[2] !== 'RequestId') return null;
  const fields: Record<string, unknown> = { event };
  const rest = text.trimStart().slice(event.length + 1);
  for (const segment of segments(rest)) {
    const m = SEGMENT.exec(segment.trim());
    if (!m) continue;
    const name = m[1].trim();
    const value = m[2].trim();
    if (hasOwn(NUMBER_FIELDS, name)) {
      const measure = MEASURE.exec(value);
      if (measure) fields[NUMBER_FIELDS[name]] = Number(measure[1]);
    } else if (name === 'Sampled' && (value === 'true' || value === 'false')) {
      fields.sampled = value === 'true';
    } else if (value) {
      const key = hasOwn(TEXT_FIELDS, name) ? TEXT_FIELDS[name] : camelCase(name);
      if (key && !hasOwn(fields, key)) fields[key] = truncate(value, 1000);
    }
  }
  const requestId = typeof fields.requestId === 'string' ? truncate(fields.requestId) : null;
  const xray = typeof fields.xrayTraceId === 'string' ? fields.xrayTraceId : null;
  return {
    event,
    requestId,
    latencyMs: event === 'REPORT' ? parseLatencyMs(fields.durationMs) : null,
    traceId: xray ? (xrayTraceId(xray) ?? truncate(xray)) : null,
    fields,
  };
}
