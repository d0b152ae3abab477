// Turns one normalized log entry plus its source context into the NewAuditEvent the write path stores.
import type { NewAuditEvent } from '../audit/audit-types.js';
import type { Normalized } from './normalize/index.js';
import { applyRecognized } from './recognition/apply-recognized.js';
import { messageView } from './recognition/record-view.js';
import type { Recognizer } from './recognition/recognizer.js';

export type LogSource = 'cloudwatch' | 'firehose' | 'datadog' | 'otlp';

export interface EntryContext {
  source: LogSource;
  /** Log group (CloudWatch, Firehose) or the Datadog `service` tag: metadata.source_detail. */
  sourceDetail: string | null;
  /** The entry's own timestamp (CloudWatch event timestamp, Datadog timestamp), when it had a valid one. */
  timestamp: Date | null;
  /** When the sender sent the batch (the Firehose request timestamp), used after a time found in the message. */
  sentAt?: Date | null;
  receivedAt: Date;
  /** The raw message, kept whole in metadata.message. */
  message: string | null;
  /** Source-specific metadata (log stream, owner, Datadog id and tags...), merged after the common fields. */
  metadata: Record<string, unknown>;
  dedupeKey: string;
  /** The request's profiles: when given, they read the message first (recognizeMessage). */
  recognizer?: Recognizer;
  /** The record's name for profiles and the unrecognized report (the Datadog title); default its event field. */
  name?: string | null;
}

/**
 * The audit event for one entry: `tool_call` (streamed) when a tool name was found, else `log` (stored only).
 * Time: the entry's timestamp, else one found in the message, else the time the sender sent the batch, else the
 * receive time. Values not found stay null.
 * metadata: source_detail, traceId (trace id, else request id), requestId, actionWord (the word the action came from),
 * rawAction (an action word outside the vocabulary), toolCallId, mcpMethod, level, format, fields (parsed JSON/logfmt),
 * message, then the source's own fields.
 */
export function toAuditEvent(n: Normalized, ctx: EntryContext): NewAuditEvent {
  const event = genericAuditEvent(n, ctx);
  return ctx.recognizer ? recognizeMessage(event, n, ctx, ctx.recognizer) : event;
}

/**
 * The profiles' reading of a message laid over the generic one (applyRecognized). A message no profile read that the
 * generic reading did not make a tool call is tallied as unrecognized, with the message as its sample.
 */
function recognizeMessage(event: NewAuditEvent, n: Normalized, ctx: EntryContext, recognizer: Recognizer): NewAuditEvent {
  const view = messageView({
    source: ctx.source,
    logGroup: ctx.sourceDetail,
    message: ctx.message,
    fields: n.fields,
    timeMs: ctx.timestamp?.getTime() ?? null,
    receivedMs: ctx.receivedAt.getTime(),
  });
  if (ctx.name) view.name = ctx.name;
  const rec = recognizer.read(view);
  if (rec) return applyRecognized(event, rec);
  if (event.type !== 'tool_call') recognizer.unrecognized(view, () => ctx.message ?? '');
  return event;
}

function genericAuditEvent(n: Normalized, ctx: EntryContext): NewAuditEvent {
  const metadata: Record<string, unknown> = {
    source_detail: ctx.sourceDetail,
    traceId: n.traceId ?? n.requestId ?? null,
  };
  if (n.requestId !== null) metadata.requestId = n.requestId;
  if (n.actionWord !== null) metadata.actionWord = n.actionWord;
  if (n.rawAction !== null) metadata.rawAction = n.rawAction;
  if (n.toolCallId !== null) metadata.toolCallId = n.toolCallId;
  if (n.method !== null) metadata.mcpMethod = n.method;
  if (n.level !== null) metadata.level = n.level;
  metadata.format = n.format;
  if (Object.keys(n.fields).length > 0) metadata.fields = n.fields;
  if (ctx.message !== null) metadata.message = ctx.message;
  for (const key of Object.keys(ctx.metadata)) {
    if (ctx.metadata[key] !== undefined) metadata[key] = ctx.metadata[key];
  }
  return {
    type: n.toolName ? 'tool_call' : 'log',
    source: ctx.source,
    occurredAt: ctx.timestamp ?? n.timestamp ?? ctx.sentAt ?? ctx.receivedAt,
    serverId: n.serverId,
    sessionId: n.sessionId,
    toolName: n.toolName,
    action: n.action,
    latencyMs: n.latencyMs,
    metadata,
    dedupeKey: ctx.dedupeKey,
  };
}
