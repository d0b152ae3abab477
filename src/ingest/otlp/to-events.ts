// Pure mapping of OTLP spans and log records to audit events (the table in docs/ingestion-otlp.md).
import type { NewAuditEvent } from '../../audit/audit-types.js';
import { normalizeMessage } from '../normalize/index.js';
import { dedupeKey as makeDedupeKey, ownIdentity } from '../dedupe-key.js';
import { toAuditEvent } from '../to-audit-event.js';
import { anyValue, boundedAttributes, stringAttr, type Attributes } from './attributes.js';
import type { LogItem, OtlpContext, SpanItem } from './model.js';
import { explicitActionOf, isToolCall, serverIdOf, sessionIdOf, spanKindName, SPAN_KIND_SERVER, toolNameOf } from './tool-call.js';

/** Most bytes of resource attributes (JSON) copied onto each stored event; the rest is counted in resourceAttributesOmitted. */
export const MAX_RESOURCE_ATTRIBUTES_BYTES = 4096;
const MAX_INT32 = 2_147_483_647;
const STATUS_NAMES = ['unset', 'ok', 'error'];

export interface OtlpEventOptions {
  receivedAt: Date;
}

export interface ExportEvents {
  events: NewAuditEvent[];
  /** Spans that are not tool calls: accepted, not stored. */
  notToolCalls: number;
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

/**
 * contextMetadata per scope, for one export: the items of one scope share its scope object (and its resource's), so the
 * bounded resource is built once per scope, not once per item.
 */
export type ContextCache = Map<OtlpContext['scope'], Record<string, unknown>>;

/** The resource (bounded), its omitted count and the scope, as kept on every event of the resource. */
function contextMetadata(ctx: OtlpContext, cache?: ContextCache): Record<string, unknown> {
  const cached = cache?.get(ctx.scope);
  if (cached) return cached;
  const value = buildContextMetadata(ctx);
  cache?.set(ctx.scope, value);
  return value;
}

function buildContextMetadata(ctx: OtlpContext): Record<string, unknown> {
  const { kept, omitted } = boundedAttributes(ctx.resource, MAX_RESOURCE_ATTRIBUTES_BYTES);
  return {
    resource: kept,
    resourceAttributesOmitted: omitted || undefined,
    scope: ctx.scope.name || ctx.scope.version ? { name: ctx.scope.name ?? undefined, version: ctx.scope.version ?? undefined } : undefined,
  };
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
export function spanToEvent(span: SpanItem & { traceId: string; spanId: string }, opts: OtlpEventOptions, cache?: ContextCache): NewAuditEvent {
  const attrs = span.attributes;
  const toolName = toolNameOf(attrs, span.name);
  const explicit = explicitActionOf(attrs);
  const latencyMs = latencyOf(span.startNs, span.endNs);
  // A span that ended is a call that ran; the status (error or not) says how it went, not what policy decided.
  const action = explicit.present ? explicit.action : span.endNs !== null ? 'allow' : null;
  const metadata = withoutUndefined({
    source_detail: stringAttr(span.resource, 'service.name'),
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
    ...contextMetadata(span, cache),
  });
  return {
    type: toolName ? 'tool_call' : 'log',
    source: 'otlp',
    occurredAt: dateOfNanos(span.startNs) ?? opts.receivedAt,
    serverId: serverIdOf(attrs, span.resource, span.kind === SPAN_KIND_SERVER ? 'server' : 'caller'),
    sessionId: sessionIdOf(attrs, span.resource),
    toolName,
    action,
    latencyMs,
    metadata,
    dedupeKey: ownIdentity.otlpSpan(span.traceId, span.spanId),
  };
}

/** Tool-call spans become events; other spans are counted; a tool-call span without valid ids is rejected (no identity). */
export function spansToEvents(spans: SpanItem[], opts: OtlpEventOptions): ExportEvents {
  const out: ExportEvents = { events: [], notToolCalls: 0, rejected: 0, rejectMessage: null };
  const cache: ContextCache = new Map();
  for (const span of spans) {
    if (!isToolCall(span.attributes)) {
      out.notToolCalls++;
      continue;
    }
    if (span.traceId === null || span.spanId === null) {
      out.rejected++;
      out.rejectMessage ??= 'a tool-call span needs a valid trace id (16 bytes) and span id (8 bytes), its identity';
      continue;
    }
    out.events.push(spanToEvent(span as SpanItem & { traceId: string; spanId: string }, opts, cache));
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

/** The audit event of one log record: a tool call when its attributes carry the span keys, else a normalized message. */
export function logToEvent(r: LogItem, position: number, opts: OtlpEventOptions, cache?: ContextCache): NewAuditEvent {
  const dedupeKey = logDedupeKey(r, position);
  const message = bodyText(r.body);
  const otlp = withoutUndefined({
    traceId: r.traceId ?? undefined,
    spanId: r.spanId ?? undefined,
    severityText: r.severityText ?? undefined,
    severityNumber: r.severityNumber ?? undefined,
    eventName: r.eventName ?? undefined,
    timeUnixNano: r.timeNs?.toString(),
    observedTimeUnixNano: r.observedNs?.toString(),
    attributes: Object.keys(r.attributes).length ? r.attributes : undefined,
    ...contextMetadata(r, cache),
  });
  const time = dateOfNanos(r.timeNs) ?? dateOfNanos(r.observedNs);
  if (isToolCall(r.attributes)) {
    const explicit = explicitActionOf(r.attributes);
    const toolName = toolNameOf(r.attributes, r.eventName);
    const metadata = withoutUndefined({
      source_detail: stringAttr(r.resource, 'service.name'),
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
      serverId: serverIdOf(r.attributes, r.resource, 'server'),
      sessionId: sessionIdOf(r.attributes, r.resource),
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
    sourceDetail: stringAttr(r.resource, 'service.name'),
    timestamp: time,
    receivedAt: opts.receivedAt,
    message,
    dedupeKey,
    metadata: { traceId: r.traceId ?? undefined, level: r.severityText ?? undefined, otlp },
  });
  return event;
}

export function logsToEvents(records: LogItem[], opts: OtlpEventOptions): ExportEvents {
  const cache: ContextCache = new Map();
  return { events: records.map((r, i) => logToEvent(r, i, opts, cache)), notToolCalls: 0, rejected: 0, rejectMessage: null };
}
