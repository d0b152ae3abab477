// Pure: one OTLP export body (bytes + encoding) to the audit events it holds, checked against the per-export limits.
import { TooLarge } from '../../shared/domain-errors.js';
import { decodeExport, type OtlpEncoding, type OtlpSignal } from './decode.js';
import { countLogRecords, countSpans, logItems, spanItems } from './model.js';
import type { OtlpTypes } from './proto-types.js';
import { logsToEvents, spansToEvents, type ExportEvents, type OtlpEventOptions } from './to-events.js';

export interface OtlpLimits {
  /** Spans in one traces export (OTLP_MAX_SPANS_PER_EXPORT); more is a 413. */
  maxSpans: number;
  /** Log records in one logs export (OTLP_MAX_LOG_RECORDS_PER_EXPORT); more is a 413. */
  maxLogRecords: number;
  /** Messages (protobuf) or objects (JSON) in one export, counted before decoding (OTLP_MAX_MESSAGES_PER_EXPORT); more is a 413. */
  maxMessages: number;
}

/** The signal of an OTLP/HTTP path (`/v1/traces`, `/v1/logs`). */
export function signalOfPath(path: string): OtlpSignal {
  return path.endsWith('/v1/logs') ? 'logs' : 'traces';
}

/**
 * Decodes the export and maps its items. More messages than maxMessages is TooLarge (413) before anything is decoded; a
 * body that does not decode is an OtlpDecodeError (InvalidInput: 400); more items than the limit is TooLarge (413),
 * before anything is mapped.
 */
export function exportEvents(types: OtlpTypes, limits: OtlpLimits, signal: OtlpSignal, bytes: Buffer, encoding: OtlpEncoding, opts: OtlpEventOptions): ExportEvents {
  const type = signal === 'traces' ? types.traceRequest : types.logsRequest;
  const body = decodeExport(type, bytes, encoding, signal, limits.maxMessages);
  const limit = signal === 'traces' ? limits.maxSpans : limits.maxLogRecords;
  const count = signal === 'traces' ? countSpans(body) : countLogRecords(body);
  if (count > limit) {
    const setting = signal === 'traces' ? 'OTLP_MAX_SPANS_PER_EXPORT' : 'OTLP_MAX_LOG_RECORDS_PER_EXPORT';
    throw new TooLarge(`${count} ${signal === 'traces' ? 'spans' : 'log records'} in one export; the limit is ${limit} (${setting})`);
  }
  return signal === 'traces' ? spansToEvents(spanItems(body), opts) : logsToEvents(logItems(body), opts);
}

/** The partial_success message of an export with rejected items, else null. */
export function rejectMessage(out: ExportEvents): string | null {
  return out.rejected ? `${out.rejected} rejected: ${out.rejectMessage}` : null;
}
