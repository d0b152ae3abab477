// POST /api/v1/ingest/firehose: the Amazon Data Firehose HTTP endpoint delivery protocol, answering in Firehose's own shape.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { NewAuditEvent } from '../audit/audit-types.js';
import { authOf, type Authenticator } from '../auth/authenticate.js';
import { toErrorResponse, zodIssues } from '../http/error-handler.js';
import { BadRequestError } from '../http/errors.js';
import { decodeContentEncoding } from './body-decoding.js';
import { firehoseRecordEvents, type FirehoseRecordContext } from './firehose-records.js';
import { commonAttributesSchema, firehoseRequestSchema } from './firehose-schemas.js';
import { ingest, type IngestDeps } from './ingest-result.js';
import { installLogBodyParsers, requireContentType } from './log-body-parsers.js';

/** All records of one request may decompress to at most this many times the body limit; later records are stored raw. */
export const FIREHOSE_DECODED_FACTOR = 8;

const REQUEST_ID_HEADER = 'x-amz-firehose-request-id';

function headerRequestId(request: FastifyRequest): string | null {
  const v = request.headers[REQUEST_ID_HEADER];
  return typeof v === 'string' && v.trim() ? v.trim().slice(0, 200) : null;
}

/** The request id to echo: the body's, else the header's, else ''. */
function requestIdOf(request: FastifyRequest): string {
  const body = request.body as { requestId?: unknown } | undefined;
  if (body && typeof body === 'object' && typeof body.requestId === 'string' && body.requestId.trim()) return body.requestId.trim().slice(0, 200);
  return headerRequestId(request) ?? '';
}

function commonAttributes(request: FastifyRequest): Record<string, string> | undefined {
  const v = request.headers['x-amz-firehose-common-attributes'];
  if (typeof v !== 'string' || v.length > 16 * 1024) return undefined;
  try {
    const r = commonAttributesSchema.safeParse(JSON.parse(v));
    return r.success ? r.data.commonAttributes : undefined;
  } catch {
    return undefined;
  }
}

/** Every failure answers `{requestId, timestamp, errorMessage}` with the status the generic handler would use. */
function firehoseErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const { body, retryAfter } = toErrorResponse(err);
  if (body.statusCode >= 500) request.log.error({ err }, 'firehose request failed');
  else request.log.info({ code: body.code, statusCode: body.statusCode }, body.message);
  if (retryAfter !== undefined) reply.header('Retry-After', String(retryAfter));
  const issues = body.issues?.length ? ` (${body.issues.map((i) => `${i.path}: ${i.message}`).join('; ')})` : '';
  void reply
    .code(body.statusCode)
    .type('application/json')
    .send({ requestId: requestIdOf(request), timestamp: Date.now(), errorMessage: `${body.message}${issues}`.slice(0, 8192) });
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

export function registerFirehoseRoutes(app: FastifyInstance, deps: IngestDeps & { auth: Authenticator }) {
  void app.register(async (scope) => {
    installLogBodyParsers(scope, { binary: false });
    scope.post(
      '/api/v1/ingest/firehose',
      {
        onRequest: [deps.auth.require({ scope: 'ingest:write', cookie: false, keyHeader: 'x-amz-firehose-access-key' }), requireContentType(['application/json'])],
        preParsing: decodeContentEncoding,
        errorHandler: firehoseErrorHandler,
      },
      async (request) => {
        const auth = authOf(request);
        const parsed = firehoseRequestSchema.safeParse(request.body);
        if (!parsed.success) throw new BadRequestError('body is not a Firehose delivery request {requestId, timestamp, records[{data}]}', zodIssues(parsed.error));
        const requestId = parsed.data.requestId ?? headerRequestId(request);
        if (!requestId) throw new BadRequestError('requestId is missing from the body and the X-Amz-Firehose-Request-Id header', [{ path: 'requestId', message: 'required' }]);
        const limit = request.routeOptions.bodyLimit ?? 1024 * 1024;
        const ctx: FirehoseRecordContext = {
          requestId,
          receivedAt: new Date(),
          recordLimit: limit,
          budget: { remaining: limit * FIREHOSE_DECODED_FACTOR },
          firehose: { requestId, timestamp: parsed.data.timestamp, commonAttributes: commonAttributes(request) },
        };
        const events: NewAuditEvent[] = [];
        for (let i = 0; i < parsed.data.records.length; i++) {
          for (const e of await firehoseRecordEvents(parsed.data.records[i], i, ctx)) events.push(e);
        }
        const stored = await storeInChunks(deps, auth.orgId, events);
        request.log.info({ requestId, records: parsed.data.records.length, ...stored }, 'firehose delivery stored');
        return { requestId, timestamp: Date.now() };
      },
    );
  });
}
