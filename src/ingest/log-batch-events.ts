// Turns a decoded CloudWatch LogBatch into audit events: normalize each message, keep the CloudWatch context in metadata.
import { createHash } from 'node:crypto';
import type { NewAuditEvent } from '../audit/audit-types.js';
import { normalizeMessage } from './normalize/index.js';
import type { LogBatch, LogEventEntry } from './cloudwatch-payload.js';
import { toAuditEvent, type LogSource } from './to-audit-event.js';

/** `cw:<event id>` when CloudWatch gave one, else a hash of (log group, log stream, timestamp, message, position). */
export function cloudWatchDedupeKey(batch: LogBatch, e: LogEventEntry, position: number): string {
  if (e.id !== null) return `cw:${e.id}`;
  const digest = createHash('sha256').update(JSON.stringify([batch.logGroup, batch.logStream, e.rawTimestamp, e.message, position])).digest('base64url');
  return `cw:hash:${digest}`;
}

export interface BatchEventOptions {
  source: Extract<LogSource, 'cloudwatch' | 'firehose'>;
  receivedAt: Date;
  /** How the batch arrived, kept as metadata.payloadFormat (spec, subscription, awslogs, firehose). */
  payloadFormat: string;
  /** Dedupe key of the entry at `position`; defaults to cloudWatchDedupeKey. */
  keyFor?: (e: LogEventEntry, position: number) => string;
  /** Extra metadata for every entry (e.g. the Firehose request id and record index). */
  extra?: (e: LogEventEntry, position: number) => Record<string, unknown>;
}

/** One audit event per log event, in order. */
export function logBatchToEvents(batch: LogBatch, opts: BatchEventOptions): NewAuditEvent[] {
  const keyFor = opts.keyFor ?? ((e: LogEventEntry, i: number) => cloudWatchDedupeKey(batch, e, i));
  return batch.events.map((e, i) =>
    toAuditEvent(normalizeMessage(e.message), {
      source: opts.source,
      sourceDetail: batch.logGroup || null,
      timestamp: e.timestamp,
      receivedAt: opts.receivedAt,
      message: e.message,
      dedupeKey: keyFor(e, i),
      metadata: {
        payloadFormat: opts.payloadFormat,
        cloudwatch: {
          logGroup: batch.logGroup,
          logStream: batch.logStream,
          eventId: e.id ?? undefined,
          owner: batch.owner ?? undefined,
          subscriptionFilters: batch.subscriptionFilters ?? undefined,
          messageType: batch.messageType ?? undefined,
          policyLevel: batch.policyLevel ?? undefined,
          extractedFields: e.extractedFields ?? undefined,
          invalidTimestamp: e.timestamp === null && e.rawTimestamp !== null ? e.rawTimestamp : undefined,
        },
        ...(opts.extra ? opts.extra(e, i) : {}),
      },
    }),
  );
}
