// Record views of OTLP spans and log records (the items src/ingest/otlp/model.ts builds from a decoded export).
import { anyValue } from '../otlp/attributes.js';
import type { LogItem, SpanItem } from '../otlp/model.js';
import { boundedMap, boundedValue, emptyView, type RecordView } from './record-view.js';

const STATUS_NAMES = ['unset', 'ok', 'error'];
const KIND_NAMES = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

function ms(ns: bigint | null): number {
  return ns === null ? 0 : Number(ns / 1_000_000n);
}

/** The view of one span: its name, scope, resource and attributes, and timing (duration in ms from start and end). */
export function spanView(span: SpanItem, receivedMs: number): RecordView {
  const view = emptyView('otlp', 'span', receivedMs);
  view.name = span.name;
  view.scope = span.context.scope.name ?? '';
  view.resource = boundedMap(span.context.resource);
  view.attributes = boundedMap(span.attributes);
  const startMs = ms(span.startNs);
  const endMs = ms(span.endNs);
  const durationMs = span.startNs !== null && span.endNs !== null && span.endNs >= span.startNs ? Math.round(Number(span.endNs - span.startNs) / 1e6) : 0;
  view.span = {
    traceId: span.traceId ?? '',
    spanId: span.spanId ?? '',
    startMs,
    endMs,
    durationMs,
    status: STATUS_NAMES[span.status.code] ?? String(span.status.code),
    kindName: KIND_NAMES[span.kind] ?? 'unspecified',
  };
  return view;
}

/** The view of one log record: event name (or, without one, a string body that looks like an event name), times, ids. */
export function logView(r: LogItem, receivedMs: number): RecordView {
  const view = emptyView('otlp', 'log', receivedMs);
  view.scope = r.context.scope.name ?? '';
  view.resource = boundedMap(r.context.resource);
  view.attributes = boundedMap(r.attributes);
  view.body = boundedValue(anyValue(r.body));
  const attrName = view.attributes['event.name'];
  view.name = r.eventName ?? (typeof attrName === 'string' ? attrName : '');
  view.log = {
    timeMs: ms(r.timeNs),
    observedMs: ms(r.observedNs),
    severity: r.severityText ?? '',
    traceId: r.traceId ?? '',
    spanId: r.spanId ?? '',
  };
  return view;
}
