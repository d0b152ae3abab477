// normalizeMessage: detects a log message's format (Lambda platform line, JSON, logfmt, text) and extracts tool-call fields.
import { boundedFields, parseJsonObject } from './json-message.js';
import { extractFromRecord } from './fields.js';
import { parseDockerGatewayLine } from './gateway-lines.js';
import { emptyHints, mergeHints, toNormalized, type Hints } from './hints.js';
import { parseLambdaPlatformLine, splitLambdaPrefix } from './lambda.js';
import { parseLogfmtMessage } from './logfmt.js';
import { extractTextHints } from './text.js';
import { scanTraceIds } from './trace-ids.js';
import { emptyNormalized, type Normalized, type NormalizedFormat } from './types.js';
import { findInRecord, findInText, type Findings } from '../recognition/heuristic-fields.js';
import { keyWords } from '../recognition/key-words.js';
import { parseLatencyMs } from './latency.js';

export interface MessageFindings {
  hints: Hints;
  format: NormalizedFormat;
  fields: Record<string, unknown>;
}

/** Trace ids written anywhere in the text (e.g. an X-Ray `Root=` inside a header string), as fallbacks. */
function textTraceHints(text: string): Hints {
  const traces = scanTraceIds(text);
  return { ...emptyHints(), traceId: traces.explicit, traceparentId: traces.traceparent, xrayTraceId: traces.xray };
}

/** What a message holds, before trace id precedence is applied (normalizeDatadog merges these). */
export function analyzeMessage(message: string): MessageFindings {
  const platform = parseLambdaPlatformLine(message);
  if (platform) {
    const hints = { ...emptyHints(), requestId: platform.requestId, latencyMs: platform.latencyMs, xrayTraceId: platform.traceId };
    return { hints, format: 'lambda-platform', fields: platform.fields };
  }
  const prefix = splitLambdaPrefix(message);
  const body = prefix ? prefix.body : message;
  // The Lambda runtime prefix is authoritative for the request id, level and time of the line.
  const fromPrefix: Hints = prefix
    ? { ...emptyHints(), requestId: prefix.requestId, level: prefix.level, timestamp: prefix.timestamp }
    : emptyHints();
  const json = parseJsonObject(body);
  if (json) {
    const hints = mergeHints(fromPrefix, extractFromRecord(json, body), textTraceHints(body));
    return { hints, format: 'json', fields: boundedFields(json) };
  }
  const logfmt = parseLogfmtMessage(body);
  if (logfmt) {
    const hints = mergeHints(fromPrefix, extractFromRecord(logfmt, null), textTraceHints(body));
    return { hints, format: 'logfmt', fields: logfmt };
  }
  const gateway = parseDockerGatewayLine(body);
  if (gateway) return { hints: mergeHints(fromPrefix, gateway.hints, textTraceHints(body)), format: 'gateway-line', fields: gateway.fields };
  return { hints: mergeHints(fromPrefix, extractTextHints(body)), format: 'text', fields: {} };
}

/**
 * Normalizes one log message (a CloudWatch/Firehose log event message, a Datadog log line...):
 * Lambda platform lines (START/END/REPORT...), JSON objects, logfmt, MCP gateway call lines, or plain text, each optionally
 * behind a Lambda runtime prefix (`<ISO time>\t<request id>\t<LEVEL>\t`). Never throws.
 */
export function normalizeMessage(message: string): Normalized {
  try {
    const text = typeof message === 'string' ? message : '';
    const { hints, format, fields } = analyzeMessage(text);
    return withWordHeuristics(toNormalized(hints, format, fields), text);
  } catch {
    return emptyNormalized('text');
  }
}

/**
 * Whether a tool word in the record's keys may name a tool: not next to MCP primitives (Tyk, Kong, MXCP; read above with
 * their type, so a resource's or prompt's name is no tool), nor in a Lambda function's own context (`function_name`
 * beside `function_arn`, Powertools' `lambda_function_name`).
 */
function toolWordsTrusted(fields: Record<string, unknown>): boolean {
  for (const key of Object.keys(fields)) {
    const words = keyWords(key);
    if (words.includes('primitive')) return false;
    if (words.includes('function') && (words.includes('arn') || words.includes('lambda'))) return false;
  }
  return true;
}

/**
 * The last resort: what the spelling lists above left null, read by the word-based heuristics
 * (src/ingest/recognition/heuristic-fields.ts) from the parsed fields, or from a text line (its leading time, a
 * duration with a unit, a `server → tools/call tool` line). A value found by the spellings is never replaced.
 */
function withWordHeuristics(n: Normalized, text: string): Normalized {
  const structured = n.format === 'json' || n.format === 'logfmt';
  if (!structured && n.format !== 'text') return n;
  const f: Findings = structured ? findInRecord(n.fields) : findInText(text);
  const out = { ...n };
  if (toolWordsTrusted(n.fields)) out.toolName ??= f.toolName;
  out.serverId ??= f.serverId;
  out.sessionId ??= f.sessionId;
  // The same bounds as the spelling lists' latency: whole, non-negative milliseconds that fit a 32-bit integer.
  out.latencyMs ??= f.latencyMs !== null ? parseLatencyMs(f.latencyMs) : null;
  // A structured record's time is read at its top level only (above); a text line's leading time is its own.
  if (!structured) out.timestamp ??= f.timestamp;
  out.toolCallId ??= f.toolCallId;
  out.method ??= f.method;
  if (out.action === null && out.rawAction === null && f.action !== null) {
    out.action = f.action;
    out.actionWord = f.actionWord;
  }
  return out;
}
