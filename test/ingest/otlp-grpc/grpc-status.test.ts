// OTLP/gRPC failure statuses: the code for each HTTP status, and RetryInfo for throttling and unavailability.
import { status as GrpcStatus } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { grpcCodeForHttp, grpcFailure } from '../../../src/ingest/otlp-grpc/grpc-status.js';

describe('grpcFailure', () => {
  it('maps the shared error statuses onto the codes OTLP names', () => {
    expect([400, 401, 403, 413, 429, 503, 500].map(grpcCodeForHttp)).toEqual([
      GrpcStatus.INVALID_ARGUMENT,
      GrpcStatus.UNAUTHENTICATED,
      GrpcStatus.PERMISSION_DENIED,
      GrpcStatus.INVALID_ARGUMENT,
      GrpcStatus.RESOURCE_EXHAUSTED,
      GrpcStatus.UNAVAILABLE,
      GrpcStatus.INTERNAL,
    ]);
  });

  it('carries a google.rpc.RetryInfo with the delay in grpc-status-details-bin for UNAVAILABLE and RESOURCE_EXHAUSTED', () => {
    const f = grpcFailure(503, 'storage is unavailable, retry later', 5);
    expect(f.code).toBe(GrpcStatus.UNAVAILABLE);
    const bin = f.metadata!.get('grpc-status-details-bin')[0] as Buffer;
    const root = protobuf.parse(`syntax = "proto3";
      message Any { string type_url = 1; bytes value = 2; }
      message Status { int32 code = 1; string message = 2; repeated Any details = 3; }
      message Duration { int64 seconds = 1; int32 nanos = 2; }
      message RetryInfo { Duration retry_delay = 1; }`).root;
    const status = root.lookupType('Status').toObject(root.lookupType('Status').decode(bin), { longs: Number }) as { code: number; message: string; details: { typeUrl: string; value: Uint8Array }[] };
    expect(status).toMatchObject({ code: GrpcStatus.UNAVAILABLE, message: 'storage is unavailable, retry later' });
    expect(status.details[0].typeUrl).toBe('type.googleapis.com/google.rpc.RetryInfo');
    expect(root.lookupType('RetryInfo').toObject(root.lookupType('RetryInfo').decode(status.details[0].value), { longs: Number })).toEqual({ retryDelay: { seconds: 5 } });
    expect(grpcFailure(429, 'slow down', 2).metadata).toBeDefined();
    expect(grpcFailure(400, 'bad').metadata).toBeUndefined();
  });
});
