// The items of a decoded OTLP export: one flat record per span or log record, with the context of its resource and scope,
// built once per resource and once per scope (never per item), bounded as every item stores it.
import { capText } from '../../shared/event-cost.js';
import { isObject } from '../../shared/input-safety.js';
import { MAX_ID_LENGTH } from '../normalize/strings.js';
import { boundedAttributes, keyValues, stringAttr, type Attributes } from './attributes.js';
import type { PlainExport } from './decode.js';

/** Most bytes of resource attributes (JSON) kept on each stored event; the number left out is kept in resourceAttributesOmitted. */
export const MAX_RESOURCE_ATTRIBUTES_BYTES = 4096;

/** The instrumentation scope's name and version, each cut to MAX_ID_LENGTH characters with the marker. */
export interface OtlpScope {
  name: string | null;
  version: string | null;
}

/** What every item of one resource shares: read once per resource. */
export interface OtlpResource {
  /** The attributes whole, for reading (service.name, mcp.session.id, ...); never stored whole. */
  attributes: Attributes;
  /** `service.name` (trimmed) cut to MAX_ID_LENGTH characters with the marker: metadata.source_detail. */
  serviceName: string | null;
  /** The attributes kept on each event (at most MAX_RESOURCE_ATTRIBUTES_BYTES of JSON) and the number left out. */
  kept: Attributes;
  omitted: number;
  /**
   * What the metadata of every span event of the resource shares, the very same values: `source_detail`, `resource`
   * and `resourceAttributesOmitted`. It is their sharedMetadata, stored once per organization (audit_contexts) rather
   * than in each row.
   */
  spanShared: Record<string, unknown>;
}

/** What every item of one scope of one resource shares, built once per scope: the same objects on every item. */
export interface OtlpContext {
  /** The resource's attributes, whole, for reading. */
  resource: Attributes;
  scope: OtlpScope;
  serviceName: string | null;
  /** The metadata every event of the scope carries: `resource` (bounded), `resourceAttributesOmitted`, `scope`. */
  stored: Record<string, unknown>;
  /** The resource's spanShared. */
  spanShared: Record<string, unknown>;
}

export interface SpanItem {
  context: OtlpContext;
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

export interface LogItem {
  context: OtlpContext;
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

/** A resource's attributes read once: whole for reading, bounded for storing. */
export function resourceOf(attributes: Attributes): OtlpResource {
  const service = stringAttr(attributes, 'service.name');
  const { kept, omitted } = boundedAttributes(attributes, MAX_RESOURCE_ATTRIBUTES_BYTES);
  const serviceName = service === null ? null : capText(service, MAX_ID_LENGTH);
  const spanShared: Record<string, unknown> = { source_detail: serviceName, resource: kept };
  if (omitted) spanShared.resourceAttributesOmitted = omitted;
  return { attributes, serviceName, kept, omitted, spanShared };
}

/** The context of the items of one scope of `resource`: built once, shared by all of them. */
export function contextOf(resource: OtlpResource, scopeValue: unknown): OtlpContext {
  const raw = rec(scopeValue);
  const name = str(raw.name);
  const version = str(raw.version);
  const scope = { name: name === null ? null : capText(name, MAX_ID_LENGTH), version: version === null ? null : capText(version, MAX_ID_LENGTH) };
  const stored: Record<string, unknown> = { resource: resource.kept };
  if (resource.omitted) stored.resourceAttributesOmitted = resource.omitted;
  if (scope.name || scope.version) stored.scope = { ...(scope.name ? { name: scope.name } : {}), ...(scope.version ? { version: scope.version } : {}) };
  return { resource: resource.attributes, scope, serviceName: resource.serviceName, stored, spanShared: resource.spanShared };
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
    const resource = resourceOf(keyValues(rec(rs.resource).attributes));
    for (const ss of list(rs.scopeSpans)) {
      const context = contextOf(resource, ss.scope);
      for (const s of list(ss.spans)) {
        const status = rec(s.status);
        out.push({
          context,
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
    const resource = resourceOf(keyValues(rec(rl.resource).attributes));
    for (const sl of list(rl.scopeLogs)) {
      const context = contextOf(resource, sl.scope);
      for (const r of list(sl.logRecords)) {
        out.push({
          context,
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
