// POST /api/v1/ingest/otlp/v1/traces and /v1/logs: OTLP/HTTP (protobuf or JSON, gzip), answered as the OTLP spec says.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authOf, type Authenticator } from '../../auth/authenticate.js';
import { toErrorResponse } from '../../http/error-handler.js';
import type { Metrics } from '../../metrics/metrics.js';
import { z } from 'zod';
import { SECURITY } from '../../http/route-schemas.js';
import { decodeContentEncoding } from '../body-decoding.js';
import { ingest, type IngestDeps } from '../ingest-result.js';
import { mediaTypeOf, requireContentType } from '../log-body-parsers.js';
import { exportResponse, JSON_TYPE, PROTOBUF_TYPE, statusAnswer, type EncodedAnswer } from './answers.js';
import type { OtlpEncoding, OtlpSignal } from './decode.js';
import { exportEvents, rejectMessage, type OtlpLimits } from './export-events.js';
import type { OtlpTypes } from './proto-types.js';

export const OTLP_PATH = '/api/v1/ingest/otlp';

export interface OtlpDeps extends Omit<IngestDeps, 'maxEntries'>, OtlpLimits {
  auth: Authenticator;
  types: OtlpTypes;
  metrics: Metrics;
}

/** The encoding of the request, which the answer uses too: JSON when it was JSON, else protobuf. */
export function encodingOf(request: FastifyRequest): OtlpEncoding {
  return mediaTypeOf(request) === JSON_TYPE ? 'json' : 'protobuf';
}

function send(reply: FastifyReply, status: number, answer: EncodedAnswer) {
  return reply.code(status).type(answer.contentType).send(answer.body);
}

/** Decodes, maps and stores one export; answers the Export…ServiceResponse. */
async function handleExport(deps: OtlpDeps, signal: OtlpSignal, request: FastifyRequest, reply: FastifyReply) {
  const auth = authOf(request);
  const encoding = encodingOf(request);
  const bytes = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const out = exportEvents(deps.types, deps, signal, bytes, encoding, { receivedAt: new Date() });
  const limit = signal === 'traces' ? deps.maxSpans : deps.maxLogRecords;
  if (out.notToolCalls) deps.metrics.otlpSpansNotStored.inc({ reason: 'not_tool_call' }, out.notToolCalls);
  if (out.rejected) deps.metrics.otlpSpansNotStored.inc({ reason: 'rejected' }, out.rejected);
  if (out.events.length) await ingest({ ...deps, maxEntries: limit }, auth.orgId, 'otlp', out.events);
  return send(reply, 200, exportResponse(deps.types, signal, encoding, out.rejected, rejectMessage(out)));
}

/** Every error of these routes as a google.rpc.Status in the request's encoding, with the status code of the service's errors. */
function otlpErrorHandler(types: OtlpTypes) {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const { body, retryAfter } = toErrorResponse(err);
    if (body.statusCode >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: body.code, statusCode: body.statusCode }, body.message);
    if (retryAfter !== undefined) void reply.header('Retry-After', String(retryAfter));
    return send(reply, body.statusCode, statusAnswer(types, encodingOf(request), body.statusCode, body.message));
  };
}

const SUMMARY: Record<OtlpSignal, string> = {
  traces: 'OTLP/HTTP trace export (ExportTraceServiceRequest, protobuf or JSON, gzip); tool-call spans are stored',
  logs: 'OTLP/HTTP log export (ExportLogsServiceRequest, protobuf or JSON, gzip); every log record is stored',
};

/** The declared schema (for /openapi.json): OTLP bodies and answers are protobuf or OTLP/JSON, not the service's JSON shapes. */
function otlpRouteSchema(signal: OtlpSignal) {
  const otlp = (what: string) => ({ description: what, content: { [PROTOBUF_TYPE]: { schema: z.string() }, [JSON_TYPE]: { schema: z.record(z.string(), z.unknown()) } } });
  return {
    summary: SUMMARY[signal],
    consumes: [PROTOBUF_TYPE, JSON_TYPE],
    security: SECURITY.apiKey,
    response: {
      200: otlp(`Export${signal === 'traces' ? 'Trace' : 'Logs'}ServiceResponse, in the request's encoding (partialSuccess when items were rejected)`),
      default: otlp("google.rpc.Status ({code, message}), in the request's encoding; Retry-After on 429 and 503"),
    },
  };
}

/** Registers both routes in their own scope: raw-bytes parsers for the two OTLP types, and the OTLP error answers. */
export function registerOtlpRoutes(app: FastifyInstance, deps: OtlpDeps) {
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser([PROTOBUF_TYPE, JSON_TYPE], { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.setErrorHandler(otlpErrorHandler(deps.types));
    for (const signal of ['traces', 'logs'] as const) {
      scope.post(
        `${OTLP_PATH}/v1/${signal}`,
        {
          onRequest: [deps.auth.require({ scope: 'ingest:write', cookie: false }), requireContentType([PROTOBUF_TYPE, JSON_TYPE])],
          preParsing: decodeContentEncoding,
          schema: otlpRouteSchema(signal),
        },
        (request, reply) => handleExport(deps, signal, request, reply),
      );
    }
  });
}
