// The normalized shape of one log message, shared by every parser in this module.
import type { Action } from './actions.js';

export type NormalizedFormat = 'json' | 'logfmt' | 'lambda-platform' | 'gateway-line' | 'text' | 'datadog';

export interface Normalized {
  toolName: string | null;
  /** Mapped to the vocabulary; null when unknown or absent. */
  action: Action | null;
  /** The word as found, when it did not map (callers keep it in metadata); null otherwise. */
  rawAction: string | null;
  /** The word the action was mapped from, as found (`blocked`, `success`, `success=false`); null without an action. */
  actionWord: string | null;
  serverId: string | null;
  sessionId: string | null;
  /** Whole milliseconds; null if absent or not a finite non-negative number. */
  latencyMs: number | null;
  traceId: string | null;
  requestId: string | null;
  /** The id of this tool call (`gen_ai.tool.call.id`, `tool_call_id`). */
  toolCallId: string | null;
  /** The MCP (JSON-RPC) method, e.g. `tools/call`. */
  method: string | null;
  /** Log level if found (INFO, ERROR...). */
  level: string | null;
  format: NormalizedFormat;
  /** The parsed structured fields (JSON object or logfmt pairs), for metadata; {} for text. */
  fields: Record<string, unknown>;
  /** A timestamp found inside the message, else null. */
  timestamp: Date | null;
}

export function emptyNormalized(format: NormalizedFormat): Normalized {
  return {
    toolName: null,
    action: null,
    rawAction: null,
    actionWord: null,
    serverId: null,
    sessionId: null,
    latencyMs: null,
    traceId: null,
    requestId: null,
    toolCallId: null,
    method: null,
    level: null,
    format,
    fields: {},
    timestamp: null,
  };
}
