// Decodes an OTLP/HTTP export body (protobuf, or OTLP's JSON mapping with hex ids) into one plain object shape, after
// counting on its bytes what decoding would build (OTLP_MAX_MESSAGES_PER_EXPORT).
import protobuf from 'protobufjs';
import { isObject } from '../../shared/input-safety.js';
import { MAX_ATTRIBUTE_DEPTH, TOO_DEEP } from './attributes.js';
import { OtlpDecodeError } from './decode-error.js';
import { countJsonContainers, countProtobufMessages, MAX_MESSAGE_DEPTH } from './message-budget.js';

export { OtlpDecodeError } from './decode-error.js';

export type OtlpEncoding = 'protobuf' | 'json';
export type OtlpSignal = 'traces' | 'logs';

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

function parseJson(bytes: Buffer, maxMessages: number): Record<string, unknown> {
  const text = bytes.toString('utf8');
  countJsonContainers(text, maxMessages);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new OtlpDecodeError(`body is not valid JSON: ${(err as Error).message.slice(0, 200)}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new OtlpDecodeError('body must be a JSON object (an OTLP export request)');
  return value as Record<string, unknown>;
}

/**
 * An AnyValue of OTLP/JSON with what lies deeper than MAX_ATTRIBUTE_DEPTH levels replaced by the TOO_DEEP string, at
 * the depth `anyValue` (attributes.ts) puts the marker, so that no depth of JSON is refused for it.
 */
function capAnyValue(value: unknown, depth: number): unknown {
  if (!isObject(value)) return value;
  if (depth >= MAX_ATTRIBUTE_DEPTH) return { stringValue: TOO_DEEP };
  const array = isObject(value.arrayValue) ? value.arrayValue.values : undefined;
  if (Array.isArray(array)) for (let i = 0; i < array.length; i++) array[i] = capAnyValue(array[i], depth + 1);
  if (isObject(value.kvlistValue)) capKeyValues(value.kvlistValue.values, depth + 1);
  return value;
}

function capKeyValues(list: unknown, depth: number): void {
  if (!Array.isArray(list)) return;
  for (const item of list) if (isObject(item) && 'value' in item) item.value = capAnyValue(item.value, depth);
}

function capAttributesOf(o: Record<string, unknown>): void {
  capKeyValues(o.attributes, 0);
}

/** Caps, in place, every AnyValue of a parsed OTLP/JSON request (attributes of resources, scopes, spans, events, links; log bodies). */
function capJsonDepth(body: Record<string, unknown>, signal: OtlpSignal): void {
  const resources = signal === 'traces' ? body.resourceSpans : body.resourceLogs;
  eachObject(resources, (r) => {
    if (isObject(r.resource)) capAttributesOf(r.resource);
    eachObject(signal === 'traces' ? r.scopeSpans : r.scopeLogs, (s) => {
      if (isObject(s.scope)) capAttributesOf(s.scope);
      if (signal === 'traces') {
        eachObject(s.spans, (span) => {
          capAttributesOf(span);
          eachObject(span.events, capAttributesOf);
          eachObject(span.links, capAttributesOf);
        });
      } else {
        eachObject(s.logRecords, (record) => {
          capAttributesOf(record);
          if ('body' in record) record.body = capAnyValue(record.body, 0);
        });
      }
    });
  });
}

/**
 * Runs `decode` with protobufjs's nesting limits (100 messages, as protoc's) raised to MAX_MESSAGE_DEPTH, then puts
 * them back. Decoding is synchronous, so nothing else runs meanwhile; the export was checked against that depth first.
 */
export function withMessageDepth<T>(decode: () => T): T {
  const util = protobuf.util as unknown as { recursionLimit: number };
  const reader = protobuf.Reader as unknown as { recursionLimit: number };
  const saved = [util.recursionLimit, reader.recursionLimit];
  util.recursionLimit = MAX_MESSAGE_DEPTH;
  reader.recursionLimit = MAX_MESSAGE_DEPTH;
  try {
    return decode();
  } finally {
    [util.recursionLimit, reader.recursionLimit] = saved;
  }
}

/**
 * The export request in `bytes` as a plain object. Before anything is built, the messages (protobuf) or objects and
 * arrays (JSON) it holds are counted: more than `maxMessages` is TooLarge (413). Unknown fields are ignored, as OTLP
 * requires of receivers. OTLP/JSON attribute values nested deeper than 32 levels become the TOO_DEEP marker. Any other failure
 * (truncated protobuf, wrong wire types, protobuf messages nested deeper than MAX_MESSAGE_DEPTH, JSON of the wrong
 * shape) is an OtlpDecodeError (400).
 */
export function decodeExport(type: protobuf.Type, bytes: Buffer, encoding: OtlpEncoding, signal: OtlpSignal, maxMessages: number): PlainExport {
  if (encoding === 'protobuf') countProtobufMessages(type, bytes, maxMessages);
  const body = encoding === 'json' ? parseJson(bytes, maxMessages) : null;
  try {
    if (body === null) return withMessageDepth(() => type.toObject(type.decode(bytes), TO_PLAIN));
    hexIdsToBase64(body, signal);
    capJsonDepth(body, signal);
    return withMessageDepth(() => type.toObject(type.fromObject(body), TO_PLAIN));
  } catch (err) {
    if (err instanceof OtlpDecodeError) throw err;
    const what = encoding === 'protobuf' ? 'protobuf' : 'OTLP/JSON';
    throw new OtlpDecodeError(`body is not a valid ${what} ${signal} export request: ${String((err as Error)?.message ?? err).slice(0, 200)}`);
  }
}
