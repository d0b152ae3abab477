// The partial findings each parser produces ("hints"), how findings from several sources merge, and trace id precedence.
import type { Action } from './actions.js';
import type { Normalized, NormalizedFormat } from './types.js';

export interface Hints {
  toolName: string | null;
  action: Action | null;
  rawAction: string | null;
  /** The word `action` was mapped from, as found; travels with the action when sources merge. */
  actionWord: string | null;
  serverId: string | null;
  sessionId: string | null;
  latencyMs: number | null;
  /** An explicit traceId / trace_id / dd.trace_id. */
  traceId: string | null;
  /** The trace id part of a W3C traceparent. */
  traceparentId: string | null;
  /** An X-Ray trace id (`1-xxxxxxxx-...`). */
  xrayTraceId: string | null;
  requestId: string | null;
  toolCallId: string | null;
  method: string | null;
  level: string | null;
  timestamp: Date | null;
}

export function emptyHints(): Hints {
  return {
    toolName: null,
    action: null,
    rawAction: null,
    actionWord: null,
    serverId: null,
    sessionId: null,
    latencyMs: null,
    traceId: null,
    traceparentId: null,
    xrayTraceId: null,
    requestId: null,
    toolCallId: null,
    method: null,
    level: null,
    timestamp: null,
  };
}

/**
 * Each field from the first source that has it. For the action, the first source with a word that maps
 * to the vocabulary wins; only if none maps is the first unmapped word kept as rawAction.
 */
export function mergeHints(...sources: Hints[]): Hints {
  const out = emptyHints();
  for (const h of sources) {
    out.toolName ??= h.toolName;
    if (out.action === null && h.action !== null) {
      out.action = h.action;
      out.actionWord = h.actionWord;
    }
    out.rawAction ??= h.rawAction;
    out.serverId ??= h.serverId;
    out.sessionId ??= h.sessionId;
    out.latencyMs ??= h.latencyMs;
    out.traceId ??= h.traceId;
    out.traceparentId ??= h.traceparentId;
    out.xrayTraceId ??= h.xrayTraceId;
    out.requestId ??= h.requestId;
    out.toolCallId ??= h.toolCallId;
    out.method ??= h.method;
    out.level ??= h.level;
    out.timestamp ??= h.timestamp;
  }
  if (out.action !== null) out.rawAction = null;
  return out;
}

/** Trace id precedence: explicit traceId/trace_id/dd.trace_id, then traceparent, then X-Ray. */
export function resolveTraceId(h: Hints): string | null {
  return h.traceId ?? h.traceparentId ?? h.xrayTraceId;
}

/** The hints with trace id precedence applied inside this one source, so it can be merged as a whole with other sources. */
export function withResolvedTraceId(h: Hints): Hints {
  return { ...h, traceId: resolveTraceId(h), traceparentId: null, xrayTraceId: null };
}

export function toNormalized(h: Hints, format: NormalizedFormat, fields: Record<string, unknown>): Normalized {
  return {
    toolName: h.toolName,
    action: h.action,
    rawAction: h.action === null ? h.rawAction : null,
    actionWord: h.action === null ? null : h.actionWord,
    serverId: h.serverId,
    sessionId: h.sessionId,
    latencyMs: h.latencyMs,
    traceId: resolveTraceId(h),
    requestId: h.requestId,
    toolCallId: h.toolCallId,
    method: h.method,
    level: h.level,
    format,
    fields,
    timestamp: h.timestamp,
  };
}
