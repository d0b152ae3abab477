// Decodes one Firehose record (base64 of a gzipped subscription payload, or plain text/JSON) into audit events; never throws.
import type { NewAuditEvent } from '../audit/audit-types.js';
import { decodeBase64, gunzipBounded, isGzip } from './compression.js';
import { isControlMessage, payloadKind, toLogBatch } from './cloudwatch-payload.js';
import { parseJsonText, utf8OrNull } from './json-text.js';
import { logBatchToEvents } from './log-batch-events.js';
import { normalizeMessage } from './normalize/index.js';
import { toAuditEvent } from './to-audit-event.js';
import { AppError } from '../http/errors.js';

export interface FirehoseRecordContext {
  requestId: string;
  receivedAt: Date;
  /** Largest decompressed size of one record. */
  recordLimit: number;
  /** Decompressed bytes the rest of this request may still use; shared by its records and decremented. */
  budget: { remaining: number };
  /** Metadata every entry of this request carries under `firehose` (request id, timestamp, common attributes). */
  firehose: Record<string, unknown>;
}

function recordKey(ctx: FirehoseRecordContext, index: number): string {
  return `fh:${ctx.requestId}:${index}`;
}

/** A record that could not be decoded: stored as a `log` entry with the data as received and the reason. */
function rawRecord(ctx: FirehoseRecordContext, index: number, reason: string, data: unknown, text: string | null = null): NewAuditEvent {
  const dataText = typeof data === 'string' ? data : (JSON.stringify(data) ?? String(data));
  return toAuditEvent(normalizeMessage(''), {
    source: 'firehose',
    sourceDetail: null,
    timestamp: null,
    receivedAt: ctx.receivedAt,
    message: text,
    dedupeKey: recordKey(ctx, index),
    metadata: {
      decodeError: reason,
      data: text === null ? dataText : undefined,
      payloadFormat: 'firehose-raw',
      firehose: { ...ctx.firehose, recordIndex: index },
    },
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The record's bytes: base64-decoded, then gunzipped when they start with the gzip magic bytes. */
async function recordBytes(data: string, ctx: FirehoseRecordContext): Promise<{ ok: true; bytes: Buffer } | { ok: false; reason: string }> {
  const bytes = decodeBase64(data);
  if (bytes === null) return { ok: false, reason: 'data is not base64' };
  let out = bytes;
  if (isGzip(bytes)) {
    const limit = Math.min(ctx.recordLimit, ctx.budget.remaining);
    const inflated = await gunzipBounded(bytes, limit);
    if (!inflated.ok) {
      return { ok: false, reason: inflated.reason === 'too_large' ? `decompressed record exceeds ${limit} bytes${limit < ctx.recordLimit ? ' left for this request' : ''}` : inflated.message };
    }
    out = inflated.bytes;
  }
  ctx.budget.remaining = Math.max(0, ctx.budget.remaining - out.length);
  return { ok: true, bytes: out };
}

/** A JSON value when the text is a JSON object, else null. */
function jsonObjectOrNull(text: string): unknown {
  const t = text.trim();
  if (!t.startsWith('{') || !t.endsWith('}')) return null;
  try {
    return parseJsonText(t);
  } catch {
    return null;
  }
}

/**
 * The events of record `index`: a CloudWatch subscription payload gives one event per log event (dedupe by CloudWatch
 * event id, else request id + record index + event index); CONTROL_MESSAGE gives none; other text gives one event
 * (its message normalized); anything undecodable gives one raw `log` event saying why.
 */
export async function firehoseRecordEvents(record: unknown, index: number, ctx: FirehoseRecordContext): Promise<NewAuditEvent[]> {
  if (!isObject(record) || typeof record.data !== 'string') return [rawRecord(ctx, index, 'record has no "data" string', record)];
  const data = record.data;
  const decoded = await recordBytes(data, ctx);
  if (!decoded.ok) return [rawRecord(ctx, index, decoded.reason, data)];
  const text = utf8OrNull(decoded.bytes);
  if (text === null) return [rawRecord(ctx, index, 'decoded data is neither gzip nor UTF-8 text', data)];
  const json = jsonObjectOrNull(text);
  const firehose = { ...ctx.firehose, recordIndex: index };
  if (json !== null && payloadKind(json) === 'subscription') {
    if (isControlMessage(json)) return [];
    try {
      const batch = toLogBatch(json, Number.MAX_SAFE_INTEGER);
      return logBatchToEvents(batch, {
        source: 'firehose',
        receivedAt: ctx.receivedAt,
        payloadFormat: 'firehose-subscription',
        keyFor: (e, j) => (e.id !== null ? `cw:${e.id}` : `${recordKey(ctx, index)}:${j}`),
        extra: () => ({ firehose }),
      });
    } catch (err) {
      const issues = err instanceof AppError && err.extra.issues ? `: ${err.extra.issues.map((i) => `${i.path} ${i.message}`).join('; ')}` : '';
      return [rawRecord(ctx, index, `not a valid subscription payload${issues}`.slice(0, 1000), data, text)];
    }
  }
  return [
    toAuditEvent(normalizeMessage(text), {
      source: 'firehose',
      sourceDetail: null,
      timestamp: null,
      receivedAt: ctx.receivedAt,
      message: text,
      dedupeKey: recordKey(ctx, index),
      metadata: { payloadFormat: 'firehose-text', firehose },
    }),
  ];
}
