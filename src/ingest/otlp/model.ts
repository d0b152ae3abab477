// The items of a decoded OTLP export: one flat record per span or log record, with its resource and scope beside it.
import { isObject } from '../../shared/input-safety.js';
import { keyValues, type Attributes } from './attributes.js';
import type { PlainExport } from './decode.js';

export interface OtlpScope {
  name: string | null;
  version: string | null;
}

/** What every item of one resource shares: its attributes (whole, for mapping; stored bounded) and its scope. */
export interface OtlpContext {
  resource: Attributes;
  scope: OtlpScope;
}

export interface SpanItem extends OtlpContext {
  /** Lower-case hex; null unless a valid, non-zero 16-byte (trace) or 8-byte (span) id. */
  traceId: string | null;
  spanId: string | null;
  parentSpanId: string | null;
  name: string;
  /** SpanKind number: 1 internal, 2 server, 3 client, 4 producer, 5 consumer, 0 unspecified. */
  kind: number;
  /** Unix nanoseconds; null when 0 or absent. */
  startNs: bigint | null;
  endNs: bigint | null;
  attributes: Attributes;
  /** Status code number (0 unset, 1 ok, 2 error) and message. */
  status: { code: number; message: string | null };
}

export interface LogItem extends OtlpContext {
  timeNs: bigint | null;
  observedNs: bigint | null;
  severityNumber: number | null;
  severityText: string | null;
  body: unknown;
  attributes: Attributes;
  traceId: string | null;
  spanId: string | null;
  eventName: string | null;
}

function list(v: unknown): Record<string, unknown>[] {
  return Array.isArray(v) ? (v.filter((x) => x && typeof x === 'object') as Record<string, unknown>[]) : [];
}

function rec(v: unknown): Record<string, unknown> {
  return isObject(v) ? v : {};
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** A base64 id of exactly `bytes` bytes, not all zero, as lower-case hex; else null. */
export function idHex(v: unknown, bytes: number): string | null {
  if (typeof v !== 'string' || v === '') return null;
  const b = Buffer.from(v, 'base64');
  if (b.length !== bytes || b.every((x) => x === 0)) return null;
  return b.toString('hex');
}

/** Unix nanoseconds from a decimal string or number; null for 0, absent or not an integer. */
export function nanos(v: unknown): bigint | null {
  if (typeof v !== 'string' && typeof v !== 'number') return null;
  try {
    const n = BigInt(v);
    return n > 0n ? n : null;
  } catch {
    return null;
  }
}

function int(v: unknown): number {
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : 0;
}

function scopeOf(s: unknown): OtlpScope {
  const scope = rec(s);
  return { name: str(scope.name), version: str(scope.version) };
}

/** How many spans an export holds, counted before anything else is built from it. */
export function countSpans(body: PlainExport): number {
  let n = 0;
  for (const rs of list(body.resourceSpans)) for (const ss of list(rs.scopeSpans)) n += list(ss.spans).length;
  return n;
}

export function countLogRecords(body: PlainExport): number {
  let n = 0;
  for (const rl of list(body.resourceLogs)) for (const sl of list(rl.scopeLogs)) n += list(sl.logRecords).length;
  return n;
}

/** Every span of a traces export, in order. */
export function spanItems(body: PlainExport): SpanItem[] {
  const out: SpanItem[] = [];
  for (const rs of list(body.resourceSpans)) {
    const resource = keyValues(rec(rs.resource).attributes);
    for (const ss of list(rs.scopeSpans)) {
      const scope = scopeOf(ss.scope);
      for (const s of list(ss.spans)) {
        const status = rec(s.status);
        out.push({
          resource,
          scope,
          traceId: idHex(s.traceId, 16),
          spanId: idHex(s.spanId, 8),
          parentSpanId: idHex(s.parentSpanId, 8),
          name: typeof s.name === 'string' ? s.name : '',
          kind: int(s.kind),
          startNs: nanos(s.startTimeUnixNano),
          endNs: nanos(s.endTimeUnixNano),
          attributes: keyValues(s.attributes),
          status: { code: int(status.code), message: str(status.message) },
        });
      }
    }
  }
  return out;
}

/** Every log record of a logs export, in order. */
export function logItems(body: PlainExport): LogItem[] {
  const out: LogItem[] = [];
  for (const rl of list(body.resourceLogs)) {
    const resource = keyValues(rec(rl.resource).attributes);
    for (const sl of list(rl.scopeLogs)) {
      const scope = scopeOf(sl.scope);
      for (const r of list(sl.logRecords)) {
        out.push({
          resource,
          scope,
          timeNs: nanos(r.timeUnixNano),
          observedNs: nanos(r.observedTimeUnixNano),
          severityNumber: r.severityNumber === undefined ? null : int(r.severityNumber),
          severityText: str(r.severityText),
          body: r.body,
          attributes: keyValues(r.attributes),
          traceId: idHex(r.traceId, 16),
          spanId: idHex(r.spanId, 8),
          eventName: str(r.eventName),
        });
      }
    }
  }
  return out;
}
