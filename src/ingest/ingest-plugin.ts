// The ingest plugin (prefix /api/v1/ingest): authentication, content types, body decoding and limits, Idempotency-Key,
// the bound on what an event may cost, storing once and metrics, for every source of sources.ts; a source supplies only
// its paths, types and toEvents.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EventLog } from '../audit/event-log/event-log.js';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { toErrorResponse } from '../http/error-handler.js';
import { SECURITY } from '../http/route-schemas.js';
import type { Metrics } from '../metrics/metrics.js';
import type { EventCostBound } from '../shared/event-cost.js';
import { decodeContentEncoding } from './body-decoding.js';
import { bodyLimitOf, installBodyParsers, mediaTypeOf, requireContentType } from './content-types.js';
import { idempotencyClaim, idempotencyKeyOf } from './idempotency.js';
import type { IngestSource, ReplyContext, SourceAnswer } from './ingest-source.js';
import { ingestRouteSchema } from './ingest-route-schema.js';
import { storeEvents } from './store-events.js';
import type { Recognition } from '../recognition/recognition-service.js';

export const INGEST_PREFIX = '/api/v1/ingest';

export interface IngestPluginOptions {
  sources: readonly IngestSource[];
  auth: Authenticator;
  eventLog: EventLog;
  metrics: Metrics;
  /** BODY_LIMIT_BYTES: the largest body, after Content-Encoding decoding. */
  bodyLimit: number;
  /** INGEST_MAX_ENTRIES: the most entries one request may store. */
  maxEntries: number;
  /** INGEST_MAX_EVENT_BYTES: what one stored event may cost, applied to every source's events (boundEvent). */
  eventCost: EventCostBound;
  /** The organizations' profiles and the built-in ones: each request's records are read by them first. */
  recognition: Recognition;
}

function send(reply: FastifyReply, answer: SourceAnswer, status: number) {
  for (const [name, value] of Object.entries(answer.headers ?? {})) reply.header(name, value);
  reply.code(answer.statusCode ?? status);
  if (answer.contentType) reply.type(answer.contentType);
  return reply.send(answer.body);
}

/** A route error handler answering in the source's own shape, with the status and Retry-After the one handler would use. */
function sourceErrorHandler(source: IngestSource) {
  const formatError = source.formatError!;
  return async (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const { body, retryAfter } = toErrorResponse(err);
    if (body.statusCode >= 500) request.log.error({ err }, `${source.name} request failed`);
    else request.log.info({ code: body.code, statusCode: body.statusCode }, body.message);
    if (retryAfter !== undefined) reply.header('Retry-After', String(retryAfter));
    const ctx: ReplyContext = { request, contentType: mediaTypeOf(request) };
    const answer = await formatError({ statusCode: body.statusCode, body, retryAfter }, ctx);
    return send(reply, { contentType: 'application/json', ...answer }, body.statusCode);
  };
}

function registerSource(scope: FastifyInstance, source: IngestSource, opts: IngestPluginOptions): void {
  const types = Object.keys(source.accepts);
  installBodyParsers(scope, source.accepts);
  scope.addHook('onResponse', async (_request, reply) => {
    opts.metrics.ingestRequests.inc({ source: source.name, status: String(reply.statusCode) });
    opts.metrics.ingestDuration.observe({ source: source.name }, reply.elapsedTime / 1000);
  });
  const onRequest = [
    ...(source.beforeAuth ? [source.beforeAuth] : []),
    opts.auth.require({ scope: 'ingest:write', cookie: false, keyHeader: source.keyHeader }),
    requireContentType(types),
  ];
  for (const path of source.paths) {
    scope.post(
      path,
      {
        bodyLimit: opts.bodyLimit,
        onRequest,
        preParsing: decodeContentEncoding,
        schema: ingestRouteSchema(source.summary, types, {
          answer: source.answerSchema,
          error: source.errorSchema,
          documentedBody: source.documentedBody,
          security: source.keyHeader ? [{ [source.keyHeader]: [] }] : SECURITY.apiKey,
        }),
        ...(source.formatError ? { errorHandler: sourceErrorHandler(source) } : {}),
      },
      async (request, reply) => {
        const auth = authOf(request);
        const contentType = mediaTypeOf(request);
        const idempotencyKey = source.idempotency ? idempotencyKeyOf(request) : null;
        const recognizer = await opts.recognition.recognizerFor(auth.orgId);
        const mapped = await source.toEvents(request.body, {
          recognizer,
          idempotencyKey,
          receivedAt: new Date(),
          contentType,
          path,
          headers: request.headers,
          limits: { bodyBytes: bodyLimitOf(request), maxEntries: opts.maxEntries },
        });
        const notStored = mapped.notStored ?? 0;
        const empty = mapped.empty ?? 0;
        if (notStored) opts.metrics.ingestEvents.inc({ source: source.name, outcome: source.notStoredOutcome ?? 'not_stored' }, notStored);
        if (empty) opts.metrics.ingestEvents.inc({ source: source.name, outcome: 'empty' }, empty);
        const claim = source.idempotency ? idempotencyClaim(idempotencyKey, source.idempotency.claim, request.body) : undefined;
        const stored = await storeEvents(opts, auth.orgId, source.name, mapped.events, { idempotency: claim, chunked: mapped.chunked });
        await opts.recognition.record(auth.orgId, recognizer);
        const result = { ...stored, notStored, empty, info: mapped.info };
        if (!source.answer) return { accepted: stored.accepted, duplicates: stored.duplicates };
        return send(reply, await source.answer(result, { request, contentType }), 200);
      },
    );
  }
}

/** Registers every source in its own encapsulated scope (its parsers and hooks reach no other route). */
export async function ingestPlugin(app: FastifyInstance, opts: IngestPluginOptions): Promise<void> {
  for (const source of opts.sources) {
    await app.register(async (scope) => registerSource(scope, source, opts), { prefix: source.prefix ?? '' });
  }
}
