// The one maker of dedupe keys: an entry is deduplicated only by what its sender gave it, never by its content.
import { randomUUID } from 'node:crypto';
import { ONCE_KEY_PREFIX } from '../audit/audit-types.js';

/**
 * The sender's own identity of an entry, per source. These strings are stored as digests (audit-repo.ts, migration 006)
 * and retries depend on them: never change an existing form.
 */
export const ownIdentity = {
  /** A raw event's `id`. */
  raw: (id: string) => `raw:id:${id}`,
  /** A CloudWatch Logs event id (unique per event, also inside Firehose records). */
  cloudwatch: (eventId: string) => `cw:${eventId}`,
  /** A Datadog event `id`. */
  datadog: (id: string) => `dd:${id}`,
  /** A Firehose record: request id + record index. */
  firehoseRecord: (requestId: string, index: number) => `fh:${requestId}:${index}`,
  /** One of several payloads of a Firehose record. */
  firehosePart: (recordKey: string, part: number) => `${recordKey}:p${part}`,
  /** A log event without a CloudWatch id inside a Firehose record: its running index across the record's payloads. */
  firehoseEvent: (recordKey: string, n: number) => `${recordKey}:${n}`,
  /** An OTLP span: trace id + span id (hex). */
  otlpSpan: (traceId: string, spanId: string) => `otlp:span:${traceId}:${spanId}`,
  /** An OTLP log record with trace and span ids: those, its time and observed time (ns), and its position in the export. */
  otlpLog: (traceId: string, spanId: string, timeNs: string, observedNs: string, position: number) => `otlp:log:${traceId}:${spanId}:${timeNs}:${observedNs}:${position}`,
};

/** Source part of the keys of entries that have no identity at all (each such key is new: the entry is always stored). */
export type OncePrefix = 'raw' | 'cw' | 'dd' | 'otlp';

/**
 * The dedupe key of the entry at `position` of a request: the sender's own identity (`own`, from ownIdentity) when it
 * has one; else `idem:<Idempotency-Key>:<position>`; else a fresh `once:<prefix>:<uuid>`, so an entry without an
 * identity is always stored (two identical calls are two audit records). No identity form starts with `once:`, so such
 * keys are neither looked up nor stored (audit-repo.ts).
 */
export function dedupeKey(prefix: OncePrefix, own: string | null, idempotencyKey: string | null, position: number): string {
  if (own !== null) return own;
  if (idempotencyKey !== null) return `idem:${idempotencyKey}:${position}`;
  return `${ONCE_KEY_PREFIX}${prefix}:${randomUUID()}`;
}
