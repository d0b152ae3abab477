// Pure mapping of OTLP spans and log records to audit events (the table in docs/ingestion-otlp.md).
import type { NewAuditEvent } from '../../audit/audit-types.js';
import { normalizeMessage } from '../normalize/index.js';
import { dedupeKey as makeDedupeKey, ownIdentity } from '../dedupe-key.js';
import { toAuditEvent } from '../to-audit-event.js';
import { isEmptyEntry } from '../empty-entries.js';
import { anyValue, stringAttr, type Attributes } from './attributes.js';
import type { LogItem, SpanItem } from './model.js';
import { applyRecognized } from '../recognition/apply-recognized.js';
import { logView, spanView } from '../recognition/otlp-views.js';
import type { RecordView } from '../recognition/record-view.js';
import type { Recognizer } from '../recognition/recognizer.js';
import { explicitActionOf, isToolCall, serverIdOf, sessionIdOf, spanKindName, SPAN_KIND_SERVER, toolNameOf } from './tool-call.js';

const MAX_INT32 = 2_147_483_647;
const STATUS_NAMES = ['unset', 'ok', 'error'];

export interface OtlpEventOptions {
  receivedAt: Date;
  /** The request's profiles (EventsContext.recognizer): they read each span and log record before the generic mapping. */
  recognizer?: Recognizer;
}

/** What an unrecognized record is shown by: its name, scope and attributes (and body), as JSON. */
function sampleOf(view: RecordView): string {
  return JSON.stringify({ name: view.name, scope: view.scope, attributes: view.attributes, ...(view.kind === 'log' ? { body: view.body } : {}) });
}

export interface ExportEvents {
  events: NewAuditEvent[];
  /** Spans that are not tool calls: accepted, not stored. */
  notToolCalls: number;
  /** Log records with no body, attributes or event name, and spans with no name or attributes: not stored (isEmptyEntry). */
  empty: number;
  /** Items refused (OTLP partial success), with the reason for the first. */
  rejected: number;
  rejectMessage: string | null;
}

/** A Date for Unix nanoseconds within 1970–9999, else null. */
export function dateOfNanos(ns: bigint | null): Date | null {
  if (ns === null) return null;
  const d = new Date(Number(ns / 1_000_000n));
  const y = d.getUTCFullYear();
  return y >= 1970 && y <= 9999 ? d : null;
}

/** Whole milliseconds from start to end; null when either is missing or the end is before the start. */
export function latencyOf(startNs: bigint | null, endNs: bigint | null): number | null {
  if (startNs === null || endNs === null || endNs < startNs) return null;
  return Math.min(MAX_INT32, Math.round(Number(endNs - startNs) / 1e6));
}

/** Fields kept under their project-wide metadata names, beside the whole attribute map. */
function wellKnownMetadata(attrs: Attributes): Record<string, unknown> {
  return {
    toolCallId: stringAttr(attrs, 'gen_ai.tool.call.id') ?? undefined,
    mcpMethod: stringAttr(attrs, 'mcp.method.name') ?? undefined,
    mcpProtocolVersion: stringAttr(attrs, 'mcp.protocol.version') ?? undefined,
    errorType: stringAttr(attrs, 'error.type') ?? undefined,
  };
}

/** A copy of `o` without its undefined fields (built anew rather than deleting, which would slow the object down). */
function withoutUndefined(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) if (o[k] !== undefined) out[k] = o[k];
  return out;
}

/** The audit event of a tool-call span; its identity is its trace id + span id. */
export function spanToEvent(span: SpanItem & { traceId: string; spanId: string }, opts: OtlpEventOptions): NewAuditEvent {
  const { context } = span;
  const attrs = span.attributes;
  const toolName = toolNameOf(attrs, span.name);
  const explicit = explicitActionOf(attrs);
  const latencyMs = latencyOf(span.startNs, span.endNs);
  // A span that ended is a call that ran; the status (error or not) says how it went, not what policy decided.
  const action = explicit.present ? explicit.action : span.endNs !== null ? 'allow' : null;
  const metadata = withoutUndefined({
    source_detail: context.serviceName,
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId ?? undefined,
    spanName: span.name,
    spanKind: spanKindName(span.kind),
    status: withoutUndefined({ code: STATUS_NAMES[span.status.code] ?? String(span.status.code), message: span.status.message ?? undefined }),
    ...wellKnownMetadata(attrs),
    actionWord: explicit.action !== null && typeof attrs['audit.action'] === 'string' ? attrs['audit.action'] : undefined,
    rawAction: explicit.rawAction ?? undefined,
    startTimeUnixNano: span.startNs?.toString(),
    endTimeUnixNano: span.endNs?.toString(),
    attributes: attrs,
    // The bounded resource and the scope: the same objects on every event of the scope.
    ...context.stored,
  });
  return {
    type: toolName ? 'tool_call' : 'log',
    source: 'otlp',
    occurredAt: dateOfNanos(span.startNs) ?? opts.receivedAt,
    serverId: serverIdOf(attrs, context.resource, span.kind === SPAN_KIND_SERVER ? 'server' : 'caller'),
    sessionId: sessionIdOf(attrs, context.resource),
    toolName,
    action,
    latencyMs,
    metadata,
    sharedMetadata: context.spanShared,
    dedupeKey: ownIdentity.otlpSpan(span.traceId, span.spanId),
  };
}

/**
 * Tool-call spans become events: those a profile reads as one (the organization's, then the built-in ones), else
 * those the GenAI/MCP conventions name (isToolCall). Empty spans (no name, no attributes) and other spans are counted;
 * other spans no profile read are tallied as unrecognized. A tool-call span without valid ids is rejected (no identity).
 */
export function spansToEvents(spans: SpanItem[], opts: OtlpEventOptions): ExportEvents {
  const out: ExportEvents = { events: [], notToolCalls: 0, empty: 0, rejected: 0, rejectMessage: null };
  const recognizer = opts.recognizer;
  const receivedMs = opts.receivedAt.getTime();
  for (const span of spans) {
    if (isEmptyEntry({ name: span.name, fields: span.attributes })) {
      out.empty++;
      continue;
    }
    const view = recognizer ? spanView(span, receivedMs) : null;
    const rec = view ? recognizer!.read(view) : null;
    if (rec ? !rec.toolCall : !isToolCall(span.attributes)) {
      out.notToolCalls++;
      if (view && !rec) recognizer!.unrecognized(view, () => sampleOf(view));
      continue;
    }
    if (span.traceId === null || span.spanId === null) {
      out.rejected++;
      out.rejectMessage ??= 'a tool-call span needs a valid trace id (16 bytes) and span id (8 bytes), its identity';
      continue;
    }
    const event = spanToEvent(span as SpanItem & { traceId: string; spanId: string }, opts);
    out.events.push(rec ? applyRecognized(event, rec) : event);
  }
  return out;
}

/**
 * A log record's identity: trace id + span id + time + observed time + its position in the export, when it carries
 * trace and span ids (an exporter's retry resends the same export); else none: a fresh key, stored every time it is
 * sent. (OTLP exporters send no Idempotency-Key; the header is not read on these routes.)
 */
export function logDedupeKey(r: LogItem, position: number): string {
  const own = r.traceId !== null && r.spanId !== null ? ownIdentity.otlpLog(r.traceId, r.spanId, String(r.timeNs ?? 0), String(r.observedNs ?? 0), position) : null;
  return makeDedupeKey('otlp', own, null, position);
}

/** The text of a log body: a string as is; a map or array as JSON (so a JSON access log is read as from CloudWatch). */
export function bodyText(body: unknown): string | null {
  const v = anyValue(body);
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * The audit event of one log record: a tool call when its attributes carry the span keys, else a normalized message.
 * `message`: the body as text (bodyText), when the caller has it already.
 */
export function logToEvent(r: LogItem, position: number, opts: OtlpEventOptions, message: string | null = bodyText(r.body)): NewAuditEvent {
  const { context } = r;
  const dedupeKey = logDedupeKey(r, position);
  const otlp = withoutUndefined({
    traceId: r.traceId ?? undefined,
    spanId: r.spanId ?? undefined,
    severityText: r.severityText ?? undefined,
    severityNumber: r.severityNumber ?? undefined,
    eventName: r.eventName ?? undefined,
    timeUnixNano: r.timeNs?.toString(),
    observedTimeUnixNano: r.observedNs?.toString(),
    attributes: Object.keys(r.attributes).length ? r.attributes : undefined,
    ...context.stored,
  });
  const time = dateOfNanos(r.timeNs) ?? dateOfNanos(r.observedNs);
  if (isToolCall(r.attributes)) {
    const explicit = explicitActionOf(r.attributes);
    const toolName = toolNameOf(r.attributes, r.eventName);
    const metadata = withoutUndefined({
      source_detail: context.serviceName,
      traceId: r.traceId,
      spanId: r.spanId ?? undefined,
      ...wellKnownMetadata(r.attributes),
      rawAction: explicit.rawAction ?? undefined,
      level: r.severityText ?? undefined,
      message: message ?? undefined,
      otlp,
    });
    return {
      type: toolName ? 'tool_call' : 'log',
      source: 'otlp',
      occurredAt: time ?? opts.receivedAt,
      serverId: serverIdOf(r.attributes, context.resource, 'server'),
      sessionId: sessionIdOf(r.attributes, context.resource),
      toolName,
      // A log record is no proof that a call ran: without an explicit decision the action is unknown.
      action: explicit.action,
      latencyMs: null,
      metadata,
      dedupeKey,
    };
  }
  const event = toAuditEvent(normalizeMessage(message ?? ''), {
    source: 'otlp',
    sourceDetail: context.serviceName,
    timestamp: time,
    receivedAt: opts.receivedAt,
    message,
    dedupeKey,
    metadata: { traceId: r.traceId ?? undefined, level: r.severityText ?? undefined, otlp },
  });
  return event;
}

/** A log record's event, read by a profile when one reads it; one no profile read that is not a tool call is tallied. */
function recognizedLogEvent(r: LogItem, position: number, opts: OtlpEventOptions, message: string | null): NewAuditEvent {
  const event = logToEvent(r, position, opts, message);
  const recognizer = opts.recognizer;
  if (!recognizer) return event;
  const view = logView(r, opts.receivedAt.getTime());
  const rec = recognizer.read(view);
  if (rec) return applyRecognized(event, rec);
  if (event.type !== 'tool_call') recognizer.unrecognized(view, () => sampleOf(view));
  return event;
}

/** One event per log record, in order; a record with no body, attributes or event name stores nothing and is counted. */
export function logsToEvents(records: LogItem[], opts: OtlpEventOptions): ExportEvents {
  const out: ExportEvents = { events: [], notToolCalls: 0, empty: 0, rejected: 0, rejectMessage: null };
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const message = bodyText(r.body);
    if (isEmptyEntry({ text: message, fields: r.attributes, name: r.eventName })) out.empty++;
    // The position stays the record's own in the export (part of its identity), empty records counted in.
    else out.events.push(recognizedLogEvent(r, i, opts, message));
  }
  return out;
}
