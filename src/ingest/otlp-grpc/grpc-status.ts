// gRPC status for a failed OTLP export, as the OTLP specification asks: the code for the failure and, for throttling
// and unavailability, a google.rpc.RetryInfo in the `grpc-status-details-bin` trailer.
import { Metadata, status as GrpcStatus } from '@grpc/grpc-js';
import protobuf from 'protobufjs';

/** The gRPC code of an HTTP status the shared error handler chose. */
export function grpcCodeForHttp(httpStatus: number): GrpcStatus {
  switch (httpStatus) {
    case 400:
    case 413:
    case 415:
      return GrpcStatus.INVALID_ARGUMENT;
    case 401:
      return GrpcStatus.UNAUTHENTICATED;
    case 403:
      return GrpcStatus.PERMISSION_DENIED;
    case 429:
      return GrpcStatus.RESOURCE_EXHAUSTED;
    case 503:
      return GrpcStatus.UNAVAILABLE;
    default:
      return httpStatus >= 500 ? GrpcStatus.INTERNAL : GrpcStatus.UNKNOWN;
  }
}

/** A google.rpc.Status {code, message, details: [Any(google.rpc.RetryInfo{retry_delay})]}, encoded by hand. */
export function statusWithRetryInfo(code: number, message: string, retryAfterSeconds: number): Buffer {
  const duration = protobuf.Writer.create().uint32(8).int64(Math.max(0, Math.floor(retryAfterSeconds))).finish();
  const retryInfo = protobuf.Writer.create().uint32(10).bytes(duration).finish();
  const any = protobuf.Writer.create().uint32(10).string('type.googleapis.com/google.rpc.RetryInfo').uint32(18).bytes(retryInfo).finish();
  return Buffer.from(protobuf.Writer.create().uint32(8).int32(code).uint32(18).string(message).uint32(26).bytes(any).finish());
}

export interface GrpcFailure {
  code: GrpcStatus;
  details: string;
  metadata?: Metadata;
}

/** The failure to answer: code, message, and RetryInfo for RESOURCE_EXHAUSTED and UNAVAILABLE when a delay is known. */
export function grpcFailure(httpStatus: number, message: string, retryAfterSeconds?: number): GrpcFailure {
  const code = grpcCodeForHttp(httpStatus);
  if ((code === GrpcStatus.RESOURCE_EXHAUSTED || code === GrpcStatus.UNAVAILABLE) && retryAfterSeconds !== undefined) {
    const metadata = new Metadata();
    metadata.set('grpc-status-details-bin', statusWithRetryInfo(code, message, retryAfterSeconds));
    return { code, details: message, metadata };
  }
  return { code, details: message };
}
