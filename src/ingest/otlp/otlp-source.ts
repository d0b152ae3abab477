// Source `otlp` (POST /api/v1/ingest/otlp/v1/traces and /v1/logs): OTLP/HTTP exports, protobuf or JSON, answered as
// the OTLP specification asks (Export…ServiceResponse, google.rpc.Status errors, both in the request's encoding).
import { z } from 'zod';
import type { IngestSource, SourceEvents } from '../ingest-source.js';
import { exportResponse, JSON_TYPE, PROTOBUF_TYPE, statusAnswer } from './answers.js';
import type { OtlpEncoding, OtlpSignal } from './decode.js';
import { exportEvents, rejectMessage, signalOfPath, type OtlpLimits } from './export-events.js';
import type { OtlpTypes } from './proto-types.js';

/** What the source needs: the loaded .proto types and the per-export limits. */
export interface OtlpSettings extends OtlpLimits {
  types: OtlpTypes;
}

interface ExportInfo {
  signal: OtlpSignal;
  encoding: OtlpEncoding;
  rejected: number;
  message: string | null;
}

/** The encoding of a request (and of its answer): JSON for JSON, protobuf for anything else. */
export function encodingOf(contentType: string): OtlpEncoding {
  return contentType === JSON_TYPE ? 'json' : 'protobuf';
}

/** Protobuf bytes or OTLP/JSON, for /openapi.json. */
const otlpBody = z.union([z.string().describe('protobuf (application/x-protobuf)'), z.record(z.string(), z.unknown()).describe('OTLP/JSON (application/json)')]);

export function otlpSource(settings: OtlpSettings): IngestSource {
  const { types } = settings;
  return {
    name: 'otlp',
    prefix: '/otlp',
    paths: ['/v1/traces', '/v1/logs'],
    // Raw bytes after Content-Encoding decoding and the body limit; protobuf or JSON is decoded here.
    accepts: { [PROTOBUF_TYPE]: 'bytes', [JSON_TYPE]: 'bytes' },
    // Every span carries its identity (trace id + span id); OTLP exporters send no Idempotency-Key.
    idempotency: false,
    summary:
      'OTLP/HTTP export (ExportTraceServiceRequest on /v1/traces, ExportLogsServiceRequest on /v1/logs; protobuf or OTLP/JSON, gzip): ' +
      'GenAI/MCP tool-call spans and every log record are stored, deduplicated by trace id + span id; answers and errors per the OTLP spec',
    answerSchema: otlpBody.describe("Export…ServiceResponse in the request's encoding (partialSuccess when items were rejected)"),
    errorSchema: otlpBody.describe("google.rpc.Status {code, message} in the request's encoding; Retry-After on 429 and 503"),
    documentedBody: otlpBody,
    toEvents(body, ctx): SourceEvents {
      const signal = signalOfPath(ctx.path);
      const encoding = encodingOf(ctx.contentType);
      const out = exportEvents(types, settings, signal, Buffer.isBuffer(body) ? body : Buffer.alloc(0), encoding, { receivedAt: ctx.receivedAt, recognizer: ctx.recognizer });
      const info: ExportInfo = { signal, encoding, rejected: out.rejected, message: rejectMessage(out) };
      return { events: out.events, notStored: out.notToolCalls, empty: out.empty, info };
    },
    answer(result) {
      const info = result.info as ExportInfo;
      const a = exportResponse(types, info.signal, info.encoding, info.rejected, info.message);
      return { body: a.body, contentType: a.contentType };
    },
    formatError(error, ctx) {
      const a = statusAnswer(types, encodingOf(ctx.contentType), error.statusCode, error.body.message);
      return { body: a.body, contentType: a.contentType };
    },
    notStoredOutcome: 'not_tool_call',
  };
}
