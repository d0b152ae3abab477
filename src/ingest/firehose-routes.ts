// POST /api/v1/ingest/firehose: the Amazon Data Firehose HTTP endpoint delivery protocol, answering in Firehose's own shape.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { NewAuditEvent } from '../audit/audit-types.js';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { toErrorResponse, zodIssues } from '../http/error-handler.js';
import { BadRequestError, PayloadTooLargeError } from '../http/errors.js';
import { decodeContentEncoding } from './body-decoding.js';
import { firehoseRecordEvents, type FirehoseRecordContext } from './firehose-records.js';
import { commonAttributesOf, headerRequestId, peekBodyRequestId, requireAccessKeyHeader, sourceArnOf } from './firehose-request.js';
import { firehoseRequestSchema } from './firehose-schemas.js';
import { ingest, type IngestDeps } from './ingest-result.js';
import { ingestRouteSchema } from './ingest-route-schema.js';
import { SECURITY } from '../http/route-schemas.js';
import { z } from 'zod';
import { installLogBodyParsers, requireContentType } from './log-body-parsers.js';
import { parseTimestamp } from './normalize/index.js';

/** All records of one request may decompress to at most this many times the body limit; later records are stored raw. */
export const FIREHOSE_DECODED_FACTOR = 8;

/** The request id to echo: the body's, else the header's, else ''. */
function requestIdOf(request: FastifyRequest): string {
  const body = request.body as { requestId?: unknown } | undefined;
  if (body && typeof body === 'object' && typeof body.requestId === 'string' && body.requestId.trim()) return body.requestId.trim().slice(0, 200);
  return headerRequestId(request) ?? '';
}

/**
 * Every failure answers `{requestId, timestamp, errorMessage}` with the status the generic handler would use. A
 * request refused before its body was read (bad key, wrong content type) and sent without X-Amz-Firehose-Request-Id
 * still echoes the requestId of its body, read from the body's first bytes.
 */
async function firehoseErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const { body, retryAfter } = toErrorResponse(err);
  if (body.statusCode >= 500) request.log.error({ err }, 'firehose request failed');
  else request.log.info({ code: body.code, statusCode: body.statusCode }, body.message);
  if (retryAfter !== undefined) reply.header('Retry-After', String(retryAfter));
  const issues = body.issues?.length ? ` (${body.issues.map((i) => `${i.path}: ${i.message}`).join('; ')})` : '';
  const requestId = requestIdOf(request) || ((await peekBodyRequestId(request)) ?? '');
  return reply
    .code(body.statusCode)
    .type('application/json')
    .send({ requestId, timestamp: Date.now(), errorMessage: `${body.message}${issues}`.slice(0, 8192) });
}

/** Stores events in transactions of at most maxEntries each; every key is deterministic, so a retried request is safe. */
async function storeInChunks(deps: IngestDeps, orgId: string, events: NewAuditEvent[]): Promise<{ accepted: number; duplicates: number }> {
  let accepted = 0;
  let duplicates = 0;
  for (let i = 0; i < events.length; i += deps.maxEntries) {
    const r = await ingest(deps, orgId, 'firehose', events.slice(i, i + deps.maxEntries));
    accepted += r.accepted;
    duplicates += r.duplicates;
  }
  return { accepted, duplicates };
}

/** 413 before any record is decoded when the request lists more records than allowed. */
function checkRecordCount(body: unknown, maxRecords: number): void {
  const records = (body as { records?: unknown } | null)?.records;
  if (Array.isArray(records) && records.length > maxRecords) {
    throw new PayloadTooLargeError(`${records.length} records in one request; the limit is ${maxRecords} (FIREHOSE_MAX_RECORDS): lower the stream's buffer size`);
  }
}

export function registerFirehoseRoutes(app: FastifyInstance, deps: IngestDeps & { auth: Authenticator; maxRecords: number }) {
  void app.register(async (scope) => {
    installLogBodyParsers(scope, { binary: false });
    scope.post(
      '/api/v1/ingest/firehose',
      {
        onRequest: [requireAccessKeyHeader, deps.auth.require({ scope: 'ingest:write', cookie: false, keyHeader: 'x-amz-firehose-access-key' }), requireContentType(['application/json'])],
        preParsing: decodeContentEncoding,
        errorHandler: firehoseErrorHandler,
        schema: ingestRouteSchema(
          'Amazon Data Firehose HTTP endpoint delivery (at most FIREHOSE_MAX_RECORDS records; empty records store nothing); answers and errors in Firehose\'s shape',
          ['application/json'],
          {
            answer: z.object({ requestId: z.string(), timestamp: z.number().int() }),
            error: z.object({ requestId: z.string(), timestamp: z.number().int(), errorMessage: z.string() }),
            security: SECURITY.firehoseKey,
          },
        ),
      },
      async (request) => {
        const auth = authOf(request);
        checkRecordCount(request.body, deps.maxRecords);
        const parsed = firehoseRequestSchema.safeParse(request.body);
        if (!parsed.success) throw new BadRequestError('body is not a Firehose delivery request {requestId, timestamp, records[{data}]}', zodIssues(parsed.error));
        const requestId = parsed.data.requestId ?? headerRequestId(request);
        if (!requestId) throw new BadRequestError('requestId is missing from the body and the X-Amz-Firehose-Request-Id header', [{ path: 'requestId', message: 'required' }]);
        const limit = request.routeOptions.bodyLimit ?? 1024 * 1024;
        const sourceArn = sourceArnOf(request);
        const attributes = commonAttributesOf(request);
        const ctx: FirehoseRecordContext = {
          requestId,
          receivedAt: new Date(),
          sentAt: parseTimestamp(parsed.data.timestamp),
          sourceArn,
          recordLimit: limit,
          budget: { remaining: limit * FIREHOSE_DECODED_FACTOR },
          firehose: {
            requestId,
            timestamp: parsed.data.timestamp,
            sourceArn: sourceArn ?? undefined,
            commonAttributes: attributes.attributes,
            commonAttributesOmitted: attributes.omitted,
          },
        };
        const events: NewAuditEvent[] = [];
        let emptyRecords = 0;
        for (let i = 0; i < parsed.data.records.length; i++) {
          const outcome = await firehoseRecordEvents(parsed.data.records[i], i, ctx);
          if (outcome.empty) emptyRecords++;
          for (const e of outcome.events) events.push(e);
        }
        if (emptyRecords) deps.metrics.ingestEvents.inc({ source: 'firehose', outcome: 'empty' }, emptyRecords);
        const stored = await storeInChunks(deps, auth.orgId, events);
        request.log.info({ requestId, records: parsed.data.records.length, emptyRecords, ...stored }, 'firehose delivery stored');
        return { requestId, timestamp: Date.now() };
      },
    );
  });
}
