// Loads the vendored OTLP and google.rpc.Status .proto files (proto/) once at start and returns their message types.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

const FILES = [
  'opentelemetry/proto/collector/trace/v1/trace_service.proto',
  'opentelemetry/proto/collector/logs/v1/logs_service.proto',
  'google/rpc/status.proto',
];

/** The message types OTLP/HTTP needs: the two export requests, their responses, and the error body. */
export interface OtlpTypes {
  traceRequest: protobuf.Type;
  traceResponse: protobuf.Type;
  logsRequest: protobuf.Type;
  logsResponse: protobuf.Type;
  status: protobuf.Type;
}

/** The project's proto/ directory: src/ingest/otlp and dist/src/ingest/otlp both live below the root that holds it. */
export function defaultProtoDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  return path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../../../../proto' : '../../../proto');
}

/** Reads the .proto files from `dir` (synchronously, once at start); throws naming the directory when they are missing. */
export function loadOtlpTypes(dir: string = defaultProtoDir()): OtlpTypes {
  if (!existsSync(path.join(dir, FILES[0]))) throw new Error(`OTLP proto files not found in ${dir}`);
  const root = new protobuf.Root();
  // google/protobuf/*.proto are protobufjs's bundled well-known types; every other import is read from `dir`.
  root.resolvePath = (origin, target) => (target.startsWith('google/protobuf/') ? target : path.join(dir, target));
  root.loadSync(FILES);
  root.resolveAll();
  return {
    traceRequest: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
    traceResponse: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    logsRequest: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
    logsResponse: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse'),
    status: root.lookupType('google.rpc.Status'),
  };
}
