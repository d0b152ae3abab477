// Turns a decoded CloudWatch LogBatch into audit events: normalize each message, keep the CloudWatch context in metadata.
import type { NewAuditEvent } from '../audit/audit-types.js';
import { normalizeMessage } from './normalize/index.js';
import { truncate } from './normalize/strings.js';
import type { LogBatch, LogEventEntry } from './cloudwatch-logs/cloudwatch-logs-codec.js';
import { dedupeKey, ownIdentity } from './dedupe-key.js';
import { toAuditEvent, type LogSource } from './to-audit-event.js';
import { nextTurn } from '../shared/event-loop-turns.js';
import { isEmptyEntry } from './empty-entries.js';
import type { Recognizer } from './recognition/recognizer.js';

/** Subscription filter names kept on each event: CloudWatch allows 2 filters per log group, names of up to 512 characters. */
export const MAX_FILTERS_PER_EVENT = 2;
export const MAX_FILTER_NAME_LENGTH = 512;

/**
 * `cw:<event id>` when CloudWatch gave one (unique per event); else the request's Idempotency-Key + position; else a
 * fresh key: an entry without an identity is always stored.
 */
export function cloudWatchDedupeKey(e: LogEventEntry, position: number, idempotencyKey: string | null): string {
  return dedupeKey('cw', e.id !== null ? ownIdentity.cloudwatch(e.id) : null, idempotencyKey, position);
}

/**
 * The batch's shared context, built once and referenced by every event: short, bounded fields only. Subscription filter
 * names beyond what CloudWatch itself allows are not copied to each event; their number is kept instead. Only the
 * fields present are set (JSON leaves absent ones out either way), so an entry with nothing of its own shares it as is.
 */
function batchContext(batch: LogBatch): Record<string, unknown> {
  const filters = batch.subscriptionFilters;
  const capped = filters ? filters.slice(0, MAX_FILTERS_PER_EVENT).map((f) => truncate(f, MAX_FILTER_NAME_LENGTH)) : undefined;
  const cut = filters !== null && (filters.length > MAX_FILTERS_PER_EVENT || filters.some((f) => f.length > MAX_FILTER_NAME_LENGTH));
  const all: Record<string, unknown> = {
    logGroup: batch.logGroup,
    logStream: batch.logStream,
    owner: batch.owner ?? undefined,
    subscriptionFilters: capped,
    subscriptionFilterCount: cut ? filters.length : undefined,
    messageType: batch.messageType ?? undefined,
    policyLevel: batch.policyLevel ?? undefined,
  };
  const shared: Record<string, unknown> = {};
  for (const key of Object.keys(all)) if (all[key] !== undefined) shared[key] = all[key];
  return shared;
}

/** The cloudwatch metadata of one entry: the shared context itself, or a copy with the entry's own fields after it. */
function entryContext(shared: Record<string, unknown>, e: LogEventEntry): Record<string, unknown> {
  const invalidTimestamp = e.timestamp === null && e.rawTimestamp !== null;
  if (e.id === null && e.extractedFields === null && !invalidTimestamp) return shared;
  const own: Record<string, unknown> = { ...shared };
  if (e.id !== null) own.eventId = e.id;
  if (e.extractedFields !== null) own.extractedFields = e.extractedFields;
  if (invalidTimestamp) own.invalidTimestamp = e.rawTimestamp;
  return own;
}

export interface BatchEventOptions {
  source: Extract<LogSource, 'cloudwatch' | 'firehose'>;
  receivedAt: Date;
  /** How the batch arrived, kept as metadata.payloadFormat (spec, subscription, awslogs, firehose). */
  payloadFormat: string;
  /** The request's Idempotency-Key, for entries without a CloudWatch event id. */
  idempotencyKey?: string | null;
  /** Dedupe key of the entry at `position`; defaults to cloudWatchDedupeKey. */
  keyFor?: (e: LogEventEntry, position: number) => string;
  /** When the sender sent the batch (the Firehose request timestamp): the time of entries that carry none. */
  sentAt?: Date | null;
  /** metadata.source_detail when the batch has no log group (the Firehose stream ARN). */
  sourceDetailFallback?: string | null;
  /** Extra metadata for every entry (e.g. the Firehose request id and record index). */
  extra?: (e: LogEventEntry, position: number) => Record<string, unknown>;
  /** The request's profiles (EventsContext.recognizer). */
  recognizer?: Recognizer;
}

/** The converter of a batch's entries: the audit event of the entry at a position, or null for an empty entry (isEmptyEntry). */
function entryConverter(batch: LogBatch, opts: BatchEventOptions): (i: number) => NewAuditEvent | null {
  const idempotencyKey = opts.idempotencyKey ?? null;
  const keyFor = opts.keyFor ?? ((e: LogEventEntry, i: number) => cloudWatchDedupeKey(e, i, idempotencyKey));
  const shared = batchContext(batch);
  const sourceDetail = batch.logGroup || opts.sourceDetailFallback || null;
  const sentAt = opts.sentAt ?? null;
  // What every entry's metadata holds alike (toAuditEvent sets source_detail): stored once, not per event.
  const sharedMetadata = { source_detail: sourceDetail, payloadFormat: opts.payloadFormat, cloudwatch: shared };
  return (i) => {
    const e = batch.events[i];
    if (isEmptyEntry({ text: e.message, fields: e.extractedFields })) return null;
    const metadata: Record<string, unknown> = { payloadFormat: opts.payloadFormat, cloudwatch: entryContext(shared, e) };
    if (opts.extra) Object.assign(metadata, opts.extra(e, i));
    const event = toAuditEvent(normalizeMessage(e.message), {
      source: opts.source,
      sourceDetail,
      timestamp: e.timestamp,
      sentAt,
      receivedAt: opts.receivedAt,
      message: e.message,
      dedupeKey: keyFor(e, i),
      metadata,
      recognizer: opts.recognizer,
    });
    event.sharedMetadata = sharedMetadata;
    return event;
  };
}

/** The events of a batch: one per log event, in order, but none for an empty one (a blank line), which is counted. */
export interface BatchEvents {
  events: NewAuditEvent[];
  /** Log events with no message (or only whitespace) and no extracted fields: not stored. */
  empty: number;
}

/** One audit event per log event that carries something, in order; empty ones are counted. */
export function logBatchToEvents(batch: LogBatch, opts: BatchEventOptions): BatchEvents {
  const convert = entryConverter(batch, opts);
  const events: NewAuditEvent[] = [];
  for (let i = 0; i < batch.events.length; i++) {
    const event = convert(i);
    if (event) events.push(event);
  }
  return { events, empty: batch.events.length - events.length };
}

/** Entries normalized between two turns of the event loop by logBatchToEventsInTurns. */
export const ENTRIES_PER_TURN = 100;

/**
 * logBatchToEvents, giving the event loop a turn after every ENTRIES_PER_TURN entries: a 10,000-line batch does not
 * hold the process for its whole normalization, so the statements of a running write (which holds its
 * organization's seq lock meanwhile) and other requests go on in between.
 */
export async function logBatchToEventsInTurns(batch: LogBatch, opts: BatchEventOptions): Promise<BatchEvents> {
  const convert = entryConverter(batch, opts);
  const events: NewAuditEvent[] = [];
  for (let i = 0; i < batch.events.length; i++) {
    if (i > 0 && i % ENTRIES_PER_TURN === 0) await nextTurn();
    const event = convert(i);
    if (event) events.push(event);
  }
  return { events, empty: batch.events.length - events.length };
}
