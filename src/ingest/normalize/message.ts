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
    const { hints, format, fields } = analyzeMessage(typeof message === 'string' ? message : '');
    return toNormalized(hints, format, fields);
  } catch {
    return emptyNormalized('text');
  }
}
