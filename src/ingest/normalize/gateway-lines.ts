// Recognizes the Docker MCP Gateway's tool-call log lines (`--log-calls`, on by default): the start and the outcome of a call.
import { mapAction } from './actions.js';
import { emptyHints, type Hints } from './hints.js';
import { MAX_LATENCY_MS } from './latency.js';
import { truncate } from './strings.js';

/**
 * The gateway writes (docker/mcp-gateway, pkg/interceptors/log_calls.go):
 *   `  - Calling tool <name> with arguments: <json>`
 *   `  > Tool <name> responded in <Go duration>: status=ok|error content=[...]`
 *   `  ! Tool <name> failed after <Go duration>: <error>`
 * A call is one record: the outcome line is the tool call (tool, latency, action); the start line keeps the tool in
 * `fields` only, so a call is not counted twice.
 */
const START = /(?:^|\s)- Calling tool (\S{1,200}) with arguments: /;
const OUTCOME = /(?:^|\s)([>!]) Tool (\S{1,200}) (responded in|failed after) ((?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h))+)(?::|$)/u;
const STATUS = /^\s*status=(\w{1,20})/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gu;
const UNIT_MS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration (`1.5ms`, `2m3.5s`) in whole milliseconds; null when out of range. */
export function goDurationMs(text: string): number | null {
  let ms = 0;
  for (const m of text.matchAll(DURATION_PART)) ms += Number(m[1]) * UNIT_MS[m[2]];
  const rounded = Math.round(ms);
  return Number.isFinite(rounded) && rounded <= MAX_LATENCY_MS ? rounded : null;
}

export interface GatewayLine {
  hints: Hints;
  fields: Record<string, unknown>;
}

/** The fields of a Docker MCP Gateway call line, or null for any other line (only the first 1,000 characters are read). */
export function parseDockerGatewayLine(message: string): GatewayLine | null {
  const head = message.length > 1000 ? message.slice(0, 1000) : message;
  const outcome = OUTCOME.exec(head);
  if (outcome) {
    const [, marker, tool, verb, duration] = outcome;
    const rest = head.slice(outcome.index + outcome[0].length);
    const word = marker === '!' ? 'failed' : (STATUS.exec(rest)?.[1] ?? null);
    const mapped = mapAction(word);
    const hints: Hints = { ...emptyHints(), toolName: truncate(tool), latencyMs: goDurationMs(duration), action: mapped.action, rawAction: mapped.rawAction };
    if (mapped.action !== null) hints.actionWord = word;
    return { hints, fields: { gateway: 'docker-mcp', event: verb === 'responded in' ? 'tool_response' : 'tool_failure', tool, duration } };
  }
  const start = START.exec(head);
  if (start) return { hints: emptyHints(), fields: { gateway: 'docker-mcp', event: 'tool_call_start', tool: start[1] } };
  return null;
}
