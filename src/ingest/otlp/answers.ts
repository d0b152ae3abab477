// OTLP/HTTP answers: the Export…ServiceResponse (with partial_success) and google.rpc.Status errors, in the request's encoding.
import type { OtlpEncoding, OtlpSignal } from './decode.js';
import type { OtlpTypes } from './proto-types.js';

export const PROTOBUF_TYPE = 'application/x-protobuf';
export const JSON_TYPE = 'application/json';

export interface EncodedAnswer {
  contentType: string;
  body: Buffer | string;
}

/** The gRPC status code OTLP asks for in a google.rpc.Status, for an HTTP status. */
export function grpcCodeOf(httpStatus: number): number {
  switch (httpStatus) {
    case 400:
    case 413:
    case 415:
      return 3; // INVALID_ARGUMENT
    case 401:
      return 16; // UNAUTHENTICATED
    case 403:
      return 7; // PERMISSION_DENIED
    case 404:
      return 5; // NOT_FOUND
    case 429:
      return 8; // RESOURCE_EXHAUSTED
    case 503:
      return 14; // UNAVAILABLE
    default:
      return httpStatus >= 500 ? 13 : 2; // INTERNAL, UNKNOWN
  }
}

function encode(type: import('protobufjs').Type, value: Record<string, unknown>, encoding: OtlpEncoding): EncodedAnswer {
  const message = type.fromObject(value);
  if (encoding === 'protobuf') return { contentType: PROTOBUF_TYPE, body: Buffer.from(type.encode(message).finish()) };
  return { contentType: JSON_TYPE, body: JSON.stringify(type.toObject(message, { longs: String, enums: Number, json: true })) };
}

/** The success answer; partial_success is set only when items were rejected (or a warning is given). */
export function exportResponse(types: OtlpTypes, signal: OtlpSignal, encoding: OtlpEncoding, rejected: number, message: string | null): EncodedAnswer {
  const partial = rejected > 0 || message ? { errorMessage: message ?? '', ...(signal === 'traces' ? { rejectedSpans: rejected } : { rejectedLogRecords: rejected }) } : null;
  const type = signal === 'traces' ? types.traceResponse : types.logsResponse;
  return encode(type, partial ? { partialSuccess: partial } : {}, encoding);
}

/** An error answer: a google.rpc.Status with the gRPC code for the HTTP status and the message. */
export function statusAnswer(types: OtlpTypes, encoding: OtlpEncoding, httpStatus: number, message: string): EncodedAnswer {
  return encode(types.status, { code: grpcCodeOf(httpStatus), message }, encoding);
}
