// Decodes one Firehose record (base64 of gzipped subscription payloads, or plain text/JSON) into audit events; never throws.
import type { NewAuditEvent } from '../../audit/audit-types.js';
import { DomainError } from '../../shared/domain-errors.js';
import { isControlMessage, jsonObjectOrNull, subscriptionPayloadOf, toLogBatch } from '../cloudwatch-logs/cloudwatch-logs-codec.js';
import { decodeBase64, isGzip } from '../compression.js';
import { ownIdentity } from '../dedupe-key.js';
import { gunzipMembers } from '../gzip-members.js';
import { utf8OrNull } from '../json-text.js';
import { logBatchToEvents } from '../log-batch-events.js';
import { normalizeMessage } from '../normalize/index.js';
import { isObject } from '../../shared/input-safety.js';
import { toAuditEvent } from '../to-audit-event.js';
import { isBlank } from '../empty-entries.js';
import type { Recognizer } from '../recognition/recognizer.js';

export interface FirehoseRecordContext {
  requestId: string;
  receivedAt: Date;
  /** The request's `timestamp`: the time of entries that carry none. */
  sentAt: Date | null;
  /** X-Amz-Firehose-Source-Arn: metadata.source_detail when an entry has no log group. */
  sourceArn: string | null;
  /** Largest decompressed size of one record. */
  recordLimit: number;
  /** Decompressed bytes the rest of this request may still use; shared by its records and decremented. */
  budget: { remaining: number };
  /** Metadata every entry of this request carries under `firehose` (request id, timestamp, source ARN, attributes). */
  firehose: Record<string, unknown>;
  /** The request's profiles (EventsContext.recognizer). */
  recognizer?: Recognizer;
}

/**
 * The events of one record; `empty` when the record held no data at all (it stores nothing and is counted);
 * `emptyEntries`: blank log events inside its subscription payloads (not stored, counted as well).
 */
export interface RecordOutcome {
  events: NewAuditEvent[];
  empty: boolean;
  emptyEntries: number;
}

/** One piece of a record: decoded text (a whole record, or one of several payloads), or why it could not be decoded. */
type Part = { text: string } | { reason: string };

function recordKey(ctx: FirehoseRecordContext, index: number): string {
  return ownIdentity.firehoseRecord(ctx.requestId, index);
}

/**
 * The payloads of one decoded text: the whole text, or, when it is several lines of which at least one is a CloudWatch
 * subscription payload (what account-level and cross-account subscriptions deliver), each non-empty line.
 */
function splitPayloads(text: string): string[] {
  if (!text.includes('\n') || jsonObjectOrNull(text) !== null) return [text];
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines.some((l) => subscriptionPayloadOf(l) !== null) ? lines : [text];
}

/** The record's parts: base64-decoded, each gzip member decompressed on its own, then split into payloads. */
async function recordParts(data: string, ctx: FirehoseRecordContext): Promise<Part[]> {
  const bytes = decodeBase64(data);
  if (bytes === null) return [{ reason: 'data is not base64' }];
  const limit = Math.min(ctx.recordLimit, ctx.budget.remaining);
  const members = isGzip(bytes) ? await gunzipMembers(bytes, limit) : [{ ok: true as const, bytes }];
  const parts: Part[] = [];
  for (const m of members) {
    if (!m.ok) {
      const left = m.tooLarge && limit < ctx.recordLimit ? ' left for this request' : '';
      parts.push({ reason: m.tooLarge ? `decompressed record exceeds ${limit} bytes${left}` : m.reason });
      continue;
    }
    ctx.budget.remaining = Math.max(0, ctx.budget.remaining - m.bytes.length);
    const text = utf8OrNull(m.bytes);
    if (text === null) parts.push({ reason: 'decoded data is neither gzip nor UTF-8 text' });
    else for (const payload of splitPayloads(text)) parts.push({ text: payload });
  }
  return parts;
}

interface PartPlace {
  index: number;
  /** Key of a row made from the whole part: the record's key, or record + part number when the record has several. */
  key: string;
  /** The part's number when the record has several. */
  part?: number;
  /** Running index of log events without a CloudWatch id across the record's parts. */
  events: { next: number };
}

/** One entry made of a whole part: its text (normalized) or none, with the request's context and `metadata`. */
function partEntry(ctx: FirehoseRecordContext, at: PartPlace, text: string | null, metadata: Record<string, unknown>): NewAuditEvent {
  return toAuditEvent(normalizeMessage(text ?? ''), {
    source: 'firehose',
    sourceDetail: ctx.sourceArn,
    timestamp: null,
    sentAt: ctx.sentAt,
    receivedAt: ctx.receivedAt,
    message: text,
    dedupeKey: at.key,
    metadata: { ...metadata, firehose: { ...ctx.firehose, recordIndex: at.index, part: at.part } },
    // A part that failed to decode (no text) is stored as received, not read.
    recognizer: text === null ? undefined : ctx.recognizer,
  });
}

/**
 * A part that could not be decoded: a `log` entry with the reason and the part's text, or else the record's data as
 * received (`data` undefined: kept on another part of the same record).
 */
function rawPart(ctx: FirehoseRecordContext, at: PartPlace, reason: string, data: unknown, text: string | null): NewAuditEvent {
  const dataText = data === undefined ? undefined : typeof data === 'string' ? data : (JSON.stringify(data) ?? String(data));
  // The entry carries no parsed fields: a part that failed to decode is stored as received, not read.
  return partEntry(ctx, at, null, { decodeError: reason, data: text === null ? dataText : undefined, payloadFormat: 'firehose-raw', ...(text === null ? {} : { message: text }) });
}

/**
 * The events of one decoded payload: a subscription payload's log events (blank ones counted in `empty`), none for
 * CONTROL_MESSAGE, else one text entry.
 */
function payloadEvents(ctx: FirehoseRecordContext, at: PartPlace, text: string, data: string): { events: NewAuditEvent[]; empty: number } {
  const firehose = { ...ctx.firehose, recordIndex: at.index, part: at.part };
  const json = subscriptionPayloadOf(text);
  if (json !== null) {
    if (isControlMessage(json)) return { events: [], empty: 0 };
    try {
      const batch = toLogBatch(json, Number.MAX_SAFE_INTEGER);
      return logBatchToEvents(batch, {
        source: 'firehose',
        receivedAt: ctx.receivedAt,
        sentAt: ctx.sentAt,
        sourceDetailFallback: ctx.sourceArn,
        payloadFormat: 'firehose-subscription',
        keyFor: (e) => (e.id !== null ? ownIdentity.cloudwatch(e.id) : ownIdentity.firehoseEvent(recordKey(ctx, at.index), at.events.next++)),
        extra: () => ({ firehose }),
        recognizer: ctx.recognizer,
      });
    } catch (err) {
      const issues = err instanceof DomainError && err.options.issues ? `: ${err.options.issues.map((i) => `${i.path} ${i.message}`).join('; ')}` : '';
      return { events: [rawPart(ctx, at, `not a valid subscription payload${issues}`.slice(0, 1000), data, text)], empty: 0 };
    }
  }
  return { events: [partEntry(ctx, at, text, { payloadFormat: 'firehose-text' })], empty: 0 };
}

/**
 * The events of record `index`. Its data may hold one payload or several (gzip members, newline-separated payloads):
 * a CloudWatch subscription payload gives one event per log event (dedupe by CloudWatch event id, else request id +
 * record index + event index); CONTROL_MESSAGE gives none; other text gives one event (its message normalized);
 * anything undecodable gives one raw `log` event saying why. One bad payload never loses the others. A record with
 * no data (or only whitespace) gives none and is reported `empty` (the rule of empty-entries.ts).
 */
export async function firehoseRecordEvents(record: unknown, index: number, ctx: FirehoseRecordContext): Promise<RecordOutcome> {
  const whole: PartPlace = { index, key: recordKey(ctx, index), events: { next: 0 } };
  if (!isObject(record) || typeof record.data !== 'string') return { events: [rawPart(ctx, whole, 'record has no "data" string', record, null)], empty: false, emptyEntries: 0 };
  const data = record.data;
  if (isBlank(data)) return { events: [], empty: true, emptyEntries: 0 };
  const parts = await recordParts(data, ctx);
  if (parts.every((p) => 'text' in p && isBlank(p.text))) return { events: [], empty: true, emptyEntries: 0 };
  const events: NewAuditEvent[] = [];
  let emptyEntries = 0;
  let dataKept = false;
  parts.forEach((part, k) => {
    const at = parts.length === 1 ? whole : { ...whole, key: ownIdentity.firehosePart(whole.key, k), part: k };
    if ('reason' in part) {
      // The record's data is kept once, on its first undecodable part, never copied to each.
      events.push(rawPart(ctx, at, part.reason, dataKept ? undefined : data, null));
      dataKept = true;
    } else if (!isBlank(part.text)) {
      const payload = payloadEvents(ctx, at, part.text, data);
      for (const e of payload.events) events.push(e);
      emptyEntries += payload.empty;
    }
  });
  return { events, empty: false, emptyEntries };
}
