// Decodes an OTLP/HTTP export body (protobuf, or OTLP's JSON mapping with hex ids) into one plain object shape.
import type protobuf from 'protobufjs';
import { InvalidInput } from '../../shared/domain-errors.js';

export type OtlpEncoding = 'protobuf' | 'json';
export type OtlpSignal = 'traces' | 'logs';

/** A body that is not a valid export request of its encoding: answered 400, which exporters do not retry. */
export class OtlpDecodeError extends InvalidInput {
  constructor(message: string) {
    super(message);
    this.name = 'OtlpDecodeError';
  }
}

/** The plain form every later step reads: lowerCamelCase keys, 64-bit integers as strings, enums as numbers, bytes as base64. */
export type PlainExport = Record<string, unknown>;

const TO_PLAIN: protobuf.IConversionOptions = { longs: String, enums: Number, bytes: String, arrays: true };

const HEX = /^[0-9a-fA-F]*$/;

/** OTLP/JSON sends trace and span ids as hex; protobufjs reads bytes as base64. An id that is not hex becomes empty (no id). */
function hexToBase64(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (value.length % 2 !== 0 || !HEX.test(value)) return '';
  return Buffer.from(value, 'hex').toString('base64');
}

function eachObject(list: unknown, fn: (o: Record<string, unknown>) => void): void {
  if (!Array.isArray(list)) return;
  for (const item of list) if (item && typeof item === 'object' && !Array.isArray(item)) fn(item as Record<string, unknown>);
}

function convertIds(o: Record<string, unknown>, keys: readonly string[]): void {
  for (const k of keys) if (k in o) o[k] = hexToBase64(o[k]);
}

/** Rewrites the hex id fields of a parsed OTLP/JSON request in place, so protobufjs reads them as bytes. */
function hexIdsToBase64(body: Record<string, unknown>, signal: OtlpSignal): void {
  if (signal === 'traces') {
    eachObject(body.resourceSpans, (rs) =>
      eachObject(rs.scopeSpans, (ss) =>
        eachObject(ss.spans, (span) => {
          convertIds(span, ['traceId', 'spanId', 'parentSpanId']);
          eachObject(span.links, (link) => convertIds(link, ['traceId', 'spanId']));
        }),
      ),
    );
  } else {
    eachObject(body.resourceLogs, (rl) => eachObject(rl.scopeLogs, (sl) => eachObject(sl.logRecords, (r) => convertIds(r, ['traceId', 'spanId']))));
  }
}

function parseJson(bytes: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw new OtlpDecodeError(`body is not valid JSON: ${(err as Error).message.slice(0, 200)}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new OtlpDecodeError('body must be a JSON object (an OTLP export request)');
  return value as Record<string, unknown>;
}

/**
 * The export request in `bytes` as a plain object. Unknown fields are ignored, as OTLP requires of receivers. Any failure
 * (truncated protobuf, wrong wire types, nesting beyond the decoder's recursion limit, JSON of the wrong shape) is an
 * OtlpDecodeError.
 */
export function decodeExport(type: protobuf.Type, bytes: Buffer, encoding: OtlpEncoding, signal: OtlpSignal): PlainExport {
  try {
    if (encoding === 'protobuf') return type.toObject(type.decode(bytes), TO_PLAIN);
    const body = parseJson(bytes);
    hexIdsToBase64(body, signal);
    return type.toObject(type.fromObject(body), TO_PLAIN);
  } catch (err) {
    if (err instanceof OtlpDecodeError) throw err;
    const what = encoding === 'protobuf' ? 'protobuf' : 'OTLP/JSON';
    throw new OtlpDecodeError(`body is not a valid ${what} ${signal} export request: ${String((err as Error)?.message ?? err).slice(0, 200)}`);
  }
}
