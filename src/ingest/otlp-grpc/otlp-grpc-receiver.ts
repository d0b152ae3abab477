// OTLP/gRPC receiver (TraceService/Export and LogsService/Export) on its own port: messages arrive as raw bytes and go
// through the same decode, limits and mapping as OTLP/HTTP protobuf (exportEvents), the same API keys (the
// `authorization` metadata, scope ingest:write) and the same storing (storeEvents); answers per the OTLP specification.
import { Server, ServerCredentials, status as GrpcStatus, type sendUnaryData, type ServerUnaryCall, type ServiceDefinition } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Authenticator } from '../../auth/authenticate.js';
import { toErrorResponse } from '../../http/error-handler.js';
import { exportResponse } from '../otlp/answers.js';
import type { OtlpSignal } from '../otlp/decode.js';
import { exportEvents, rejectMessage, type OtlpLimits } from '../otlp/export-events.js';
import type { OtlpTypes } from '../otlp/proto-types.js';
import { storeEvents, type StoreDeps } from '../store-events.js';
import { grpcFailure } from './grpc-status.js';
import { Forbidden } from '../../shared/domain-errors.js';
import type { Recognition } from '../../recognition/recognition-service.js';

export interface OtlpGrpcOptions extends StoreDeps {
  types: OtlpTypes;
  limits: OtlpLimits;
  auth: Authenticator;
  logger: Logger;
  /** BODY_LIMIT_BYTES: the largest message (after gzip decoding); larger is refused with RESOURCE_EXHAUSTED by gRPC. */
  maxMessageBytes: number;
  /** OTLP_GRPC_MAX_CONCURRENT_STREAMS: exports in flight on one connection. */
  maxConcurrentStreams: number;
  /** The organizations' profiles and the built-in ones, as on OTLP/HTTP. */
  recognition: Recognition;
}

const raw = (b: Buffer) => b;

function unary(path: string): ServiceDefinition[string] {
  return { path, requestStream: false, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw, originalName: 'Export' };
}

const SERVICES: Record<OtlpSignal, ServiceDefinition> = {
  traces: { Export: unary('/opentelemetry.proto.collector.trace.v1.TraceService/Export') },
  logs: { Export: unary('/opentelemetry.proto.collector.logs.v1.LogsService/Export') },
};

/** `Bearer <key>` from the call's `authorization` metadata (OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer ask_..."). */
function bearerOf(call: ServerUnaryCall<Buffer, Buffer>): string | undefined {
  const value = call.metadata.get('authorization')[0];
  return typeof value === 'string' ? value : undefined;
}

export interface OtlpGrpcReceiver {
  /** Binds and starts; resolves to the port (0 picks a free one). */
  listen(host: string, port: number): Promise<number>;
  close(): Promise<void>;
}

export function createOtlpGrpcReceiver(opts: OtlpGrpcOptions): OtlpGrpcReceiver {
  const server = new Server({
    'grpc.max_receive_message_length': opts.maxMessageBytes,
    'grpc.max_concurrent_streams': opts.maxConcurrentStreams,
  });

  async function handle(signal: OtlpSignal, call: ServerUnaryCall<Buffer, Buffer>): Promise<Buffer> {
    // The authenticator reads only the authorization header when cookies are off.
    const request = { headers: { authorization: bearerOf(call) }, cookies: {}, method: 'POST' } as unknown as Parameters<Authenticator['resolve']>[0];
    const ctx = await opts.auth.resolve(request, { cookie: false });
    if (!ctx.scopes.includes('ingest:write')) throw new Forbidden('missing permission ingest:write', 'missing_scope');
    const recognizer = await opts.recognition.recognizerFor(ctx.orgId);
    const out = exportEvents(opts.types, opts.limits, signal, call.request, 'protobuf', { receivedAt: new Date(), recognizer });
    if (out.notToolCalls) opts.metrics.ingestEvents.inc({ source: 'otlp', outcome: 'not_tool_call' }, out.notToolCalls);
    await storeEvents(opts, ctx.orgId, 'otlp', out.events);
    await opts.recognition.record(ctx.orgId, recognizer);
    return exportResponse(opts.types, signal, 'protobuf', out.rejected, rejectMessage(out)).body as Buffer;
  }

  for (const signal of ['traces', 'logs'] as const) {
    server.addService(SERVICES[signal], {
      Export: (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>) => {
        const started = process.hrtime.bigint();
        handle(signal, call).then(
          (body) => {
            opts.metrics.ingestRequests.inc({ source: 'otlp-grpc', status: '200' });
            opts.metrics.ingestDuration.observe({ source: 'otlp-grpc' }, Number(process.hrtime.bigint() - started) / 1e9);
            callback(null, body);
          },
          (err: unknown) => {
            const { body, retryAfter } = toErrorResponse(err);
            if (body.statusCode >= 500) opts.logger.error({ err }, 'otlp grpc export failed');
            opts.metrics.ingestRequests.inc({ source: 'otlp-grpc', status: String(body.statusCode) });
            const failure = grpcFailure(body.statusCode, body.message, retryAfter);
            callback({ code: failure.code, details: failure.details, metadata: failure.metadata }, null);
          },
        );
      },
    });
  }

  return {
    listen(host, port) {
      return new Promise((resolve, reject) => {
        server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, ServerCredentials.createInsecure(), (err, bound) => (err ? reject(err) : resolve(bound)));
      });
    },
    close() {
      return new Promise((resolve) => {
        // Exports in flight finish; a client that keeps a call open past the grace is cut.
        const timer = setTimeout(() => server.forceShutdown(), 5000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}

export { GrpcStatus };
