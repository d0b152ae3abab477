// Best-effort hints in free-text log lines: `tool: search`, `action=deny`, `RequestId: <uuid>`, trace ids, a level word.
import { mapAction } from './actions.js';
import { emptyHints, type Hints } from './hints.js';
import { parseLatencyMs } from './latency.js';
import { normalizeLevel } from './levels.js';
import { scanTraceIds } from './trace-ids.js';
import { cleanString, scanWindow } from './strings.js';

// Keys may be followed by a quote, so `"tool": "search"` in a JSON fragment counts too.
// A value after `key:` or `key=`: double- or single-quoted, or a bare word of letters, digits and _ . - / @.
const VALUE = `(?:"([^"\\r\\n]{1,200})"|'([^'\\r\\n]{1,200})'|([\\p{L}\\p{N}_.\\-/@]{1,200}))`;

function keyed(keys: string): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}_.\\-])(?:${keys})"?\\s*[:=]\\s*${VALUE}`, 'iu');
}

const TOOL = keyed('toolName|tool_name|tool');
const ACTION = keyed('action|decision|verdict|outcome|policy_decision');
/** `status=` and `result=` count only when their word is in the action vocabulary (`status=200` is no action). */
const STATUS = keyed('status|result');
const SERVER = keyed('serverId|server_id|mcp_server|server');
const SESSION = keyed('sessionId|session_id|session');
const REQUEST = keyed('requestId|request_id|aws_request_id|awsRequestId|function_request_id|functionRequestId|lambda_request_id');
const LEVEL = keyed('level|lvl|severity');
const LATENCY = /(?<![\p{L}\p{N}_.-])(?:latencyMs|latency_ms|duration_ms|durationMs)"?\s*[:=]\s*"?(\d{1,12}(?:\.\d{1,9})?)/iu;
const LEVEL_WORD = /(?<![\p{L}\p{N}_-])(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)(?![\p{L}\p{N}_-])/u;

function valueOf(re: RegExp, text: string): string | null {
  const m = re.exec(text);
  if (!m) return null;
  const value = m[1] ?? m[2] ?? m[3].replace(/\.+$/, '');
  return cleanString(value);
}

/** Fields mentioned in the first 64 KiB of a free-text line. */
export function extractTextHints(text: string): Hints {
  const window = scanWindow(text);
  const h = emptyHints();
  h.toolName = valueOf(TOOL, window);
  const word = valueOf(ACTION, window);
  const action = mapAction(word);
  const status = action.action === null ? valueOf(STATUS, window) : null;
  const statusAction = mapAction(status);
  if (action.action !== null) {
    h.action = action.action;
    h.actionWord = word;
  } else if (statusAction.action !== null) {
    h.action = statusAction.action;
    h.actionWord = status;
  }
  h.rawAction = h.action === null ? action.rawAction : null;
  h.serverId = valueOf(SERVER, window);
  h.sessionId = valueOf(SESSION, window);
  const latency = LATENCY.exec(window);
  h.latencyMs = latency ? parseLatencyMs(latency[1]) : null;
  const traces = scanTraceIds(window);
  h.traceId = traces.explicit;
  h.traceparentId = traces.traceparent;
  h.xrayTraceId = traces.xray;
  h.requestId = valueOf(REQUEST, window);
  const levelWord = LEVEL_WORD.exec(window.slice(0, 256));
  h.level = normalizeLevel(valueOf(LEVEL, window)) ?? (levelWord ? levelWord[1] : null);
  return h;
}
