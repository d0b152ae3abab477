// The tool_call event of one proxied call: spec fields, with the decision, the outcome, sizes and the arguments
// (bounded, or masked when the action is `redact`) in metadata. Its dedupe key is the call id: stored once, whoever stores it.
import type { NewAuditEvent } from '../audit/audit-types.js';
import { nestsDeeper } from '../shared/input-safety.js';
import type { JsonRpcId } from './mcp-message.js';
import type { Decision, PolicyAction } from './policy-engine.js';

/**
 * How a call ended, as the proxy saw it. `unread`: a response message larger than PROXY_MAX_INSPECTED_MESSAGE_BYTES
 * passed through unread; `unknown`: the proxy stopped before it learned (its intent was swept).
 */
export const CALL_OUTCOMES = ['result', 'tool_error', 'jsonrpc_error', 'unread', 'upstream_unreachable', 'upstream_http_error', 'timeout', 'cancelled', 'no_response', 'denied', 'unknown'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

export type SessionSource = 'meta' | 'header' | 'mcp-session-id' | 'key-and-client';

/** What is known of a call before it is forwarded (also what its intent holds). */
export interface CallFacts {
  callId: string;
  serverId: string;
  sessionId: string;
  sessionSource: SessionSource;
  toolName: string;
  jsonrpcId: JsonRpcId;
  protocolVersion: string | null;
  era: 'legacy' | 'modern';
  key: { id: string; name: string };
  client: { name: string; version: string; userAgent: string };
  action: PolicyAction;
  rule: Decision['rule'];
  reason: string | null;
  ruleErrors: Decision['errors'];
  argumentsBytes: number;
  /** The arguments as stored: bounded, or masked. */
  arguments: StoredArguments;
  startedAt: string;
}

export type StoredArguments =
  | { kind: 'json'; value: Record<string, unknown> }
  | { kind: 'truncated'; text: string }
  | { kind: 'redacted'; keys: string[] };

export interface CallCompletion {
  outcome: CallOutcome;
  latencyMs: number | null;
  resultBytes: number | null;
  upstreamStatus?: number | null;
  error?: { code: number | null; message: string } | null;
  /** The call was forwarded without an intent (the store was down and the organization chose `forward`). */
  forwardedWhileStoreDown?: boolean;
}

/** Nesting kept as JSON in the record; deeper arguments are kept as (truncated) text. */
const MAX_ARGUMENT_DEPTH = 16;
const MAX_REDACTED_KEYS = 100;

/** The arguments as the record keeps them: masked (only their top-level names) for redact; else at most maxBytes of JSON. */
export function storedArguments(args: Record<string, unknown>, json: string, action: PolicyAction, maxBytes: number): StoredArguments {
  if (action === 'redact') return { kind: 'redacted', keys: Object.keys(args).slice(0, MAX_REDACTED_KEYS).map((k) => k.slice(0, 200)) };
  if (Buffer.byteLength(json) <= maxBytes && !nestsDeeper(args, MAX_ARGUMENT_DEPTH)) return { kind: 'json', value: args };
  // Cut by characters to at most maxBytes of UTF-8 (a character is at most 4 bytes; no half surrogate pair).
  let text = json.slice(0, Math.floor(maxBytes / 4));
  if (/[\ud800-\udbff]$/.test(text)) text = text.slice(0, -1);
  return { kind: 'truncated', text };
}

function argumentsMetadata(a: StoredArguments): Record<string, unknown> {
  if (a.kind === 'json') return { arguments: a.value };
  if (a.kind === 'truncated') return { argumentsText: a.text, argumentsTruncated: true };
  return { arguments: Object.fromEntries(a.keys.map((k) => [k, '[redacted]'])), argumentsRedacted: true };
}

export function dedupeKeyOf(callId: string): string {
  return `proxy:${callId}`;
}

/** The call's tool_call event. */
export function toolCallEvent(f: CallFacts, c: CallCompletion): NewAuditEvent {
  return {
    type: 'tool_call',
    source: 'proxy',
    occurredAt: new Date(f.startedAt),
    serverId: f.serverId,
    sessionId: f.sessionId,
    toolName: f.toolName,
    action: f.action,
    latencyMs: c.latencyMs,
    dedupeKey: dedupeKeyOf(f.callId),
    metadata: {
      proxy: {
        callId: f.callId,
        outcome: c.outcome,
        rule: f.rule,
        reason: f.reason,
        ...(f.ruleErrors.length ? { ruleErrors: f.ruleErrors } : {}),
        jsonrpcId: f.jsonrpcId,
        protocol: f.era === 'modern' ? (f.protocolVersion ?? 'modern') : (f.protocolVersion ?? 'legacy'),
        sessionSource: f.sessionSource,
        keyId: f.key.id,
        keyName: f.key.name,
        client: f.client,
        argumentsBytes: f.argumentsBytes,
        resultBytes: c.resultBytes,
        ...(c.upstreamStatus != null ? { upstreamStatus: c.upstreamStatus } : {}),
        ...(c.error ? { error: c.error } : {}),
        ...(c.forwardedWhileStoreDown ? { forwardedWhileStoreDown: true } : {}),
      },
      ...(f.action === 'flag' ? { flagged: true } : {}),
      ...argumentsMetadata(f.arguments),
    },
  };
}
