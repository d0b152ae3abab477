// The one error handler: every non-2xx answer is {statusCode, error, message, code[, issues]}.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { isStorageUnavailable } from '../db/db.js';
import { DomainError, type DomainErrorKind, type IssueDetail } from '../shared/domain-errors.js';
import { zodIssues } from '../shared/zod-issues.js';

export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  code: string;
  issues?: IssueDetail[];
  [k: string]: unknown;
}

export { zodIssues };

const FASTIFY_CODES: Record<string, [number, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'invalid_request'],
  FST_ERR_CTP_INVALID_TYPE: [400, 'invalid_request'],
  FST_ERR_BAD_URL: [400, 'invalid_request'],
  FST_ERR_ASYNC_CONSTRAINT: [400, 'invalid_request'],
};

/** The one mapping to HTTP: status and default code of each domain error kind (src/shared/domain-errors.ts). */
const DOMAIN_ANSWERS: Record<DomainErrorKind, [number, string]> = {
  invalid_input: [400, 'invalid_request'],
  unauthenticated: [401, 'unauthorized'],
  forbidden: [403, 'forbidden'],
  too_large: [413, 'payload_too_large'],
  unsupported_type: [415, 'unsupported_media_type'],
  not_found: [404, 'not_found'],
  conflict: [409, 'conflict'],
  unprocessable: [422, 'unprocessable'],
  rate_limited: [429, 'too_many_requests'],
  unavailable: [503, 'unavailable'],
};

/** The code and message of a request part that does not match its route's schema, by Fastify's name of the part. */
const VALIDATION_LOCATIONS: Record<string, [string, string]> = {
  querystring: ['invalid_query', 'query is invalid'],
  params: ['invalid_params', 'path parameters are invalid'],
  body: ['invalid_body', 'request body is invalid'],
  headers: ['invalid_headers', 'headers are invalid'],
};

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  keyword?: string;
  params?: { keys?: unknown };
}

/**
 * A schema validation failure of Fastify (the zod validator compiler's issues, with the part they are in). Keys a
 * strict schema does not know (e.g. the query parameter `from[]`) are named one by one, each as its own issue's path.
 */
function validationResponse(fe: { validation: ValidationIssue[]; validationContext?: string }): ErrorBody {
  const [code, message] = VALIDATION_LOCATIONS[fe.validationContext ?? ''] ?? ['invalid_request', 'request is invalid'];
  const unknown = fe.validationContext === 'querystring' ? 'is not a parameter of this route' : 'is not a known field';
  const issues = fe.validation.flatMap((v) => {
    const at = (v.instancePath ?? '').split('/').filter(Boolean);
    if (v.keyword === 'unrecognized_keys' && Array.isArray(v.params?.keys)) {
      return v.params.keys.map((k) => ({ path: [...at, String(k)].join('.'), message: unknown }));
    }
    return [{ path: at.join('.') || '(root)', message: v.message ?? 'is invalid' }];
  });
  return errorBody(400, code, message, { issues: issues.slice(0, 50) });
}

export function errorBody(statusCode: number, code: string, message: string, extra: Partial<ErrorBody> = {}): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, code, ...extra };
}

/** A Postgres refusal of text the request sent: U+0000 in text or JSON, an unpaired surrogate in JSON. */
function isUnstorableText(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code === '22021' || e?.code === '22P05') return true;
  return e?.code === '22P02' && typeof e.message === 'string' && /type json/.test(e.message);
}

/** Maps any thrown value to status + body; exported so the SSE route and tests share it. */
export function toErrorResponse(err: unknown): { body: ErrorBody; retryAfter?: number } {
  if (err instanceof DomainError) {
    const [status, code] = DOMAIN_ANSWERS[err.kind];
    const extra: Partial<ErrorBody> = {};
    if (err.options.issues) extra.issues = err.options.issues;
    if (err.options.details) Object.assign(extra, err.options.details);
    return { body: errorBody(status, err.options.code ?? code, err.message, extra), retryAfter: err.options.retryAfterSeconds };
  }
  if (err instanceof ZodError) {
    return { body: errorBody(400, 'invalid_body', 'request body is invalid', { issues: zodIssues(err) }) };
  }
  if (isStorageUnavailable(err)) {
    return { body: errorBody(503, 'storage_unavailable', 'storage is unavailable, retry later'), retryAfter: 5 };
  }
  // Postgres refuses U+0000 in text (22021) and in JSON (22P05), and an unpaired UTF-16 surrogate in JSON (22P02 of
  // type json). Ingested events are scrubbed of both; anywhere else (a filter, a path id, a name, a reason, a profile)
  // the text came from the request, so the request is at fault.
  if (isUnstorableText(err)) {
    return { body: errorBody(400, 'invalid_text', 'text values may not contain the NUL character (U+0000) or an unpaired UTF-16 surrogate') };
  }
  const fe = err as Partial<FastifyError> & { status?: number };
  if (fe.code === 'FST_ERR_VALIDATION' && Array.isArray(fe.validation)) return { body: validationResponse(fe as Parameters<typeof validationResponse>[0]) };
  const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
  if (mapped) return { body: errorBody(mapped[0], mapped[1], fe.message ?? 'bad request') };
  if (err instanceof SyntaxError || fe.name === 'SyntaxError') return { body: errorBody(400, 'invalid_json', `body is not valid JSON: ${(err as Error).message}`) };
  const status = fe.statusCode ?? fe.status;
  if (status && status >= 400 && status < 500) {
    return { body: errorBody(status, status === 429 ? 'too_many_requests' : 'invalid_request', fe.message ?? 'bad request') };
  }
  return { body: errorBody(500, 'internal', 'internal error') };
}

/** True when the error is the client going away before its request was complete (not a fault of the service). */
function isClientHangUp(err: unknown, request: FastifyRequest): boolean {
  const e = err as { code?: string; message?: string } | null;
  return request.raw.readableAborted || (e?.code === 'ECONNRESET' && e.message === 'aborted');
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (isClientHangUp(err, request)) {
      // Nobody is left to answer; an everyday event, logged without a stack (and not mistaken for a storage outage).
      request.log.info({ code: 'client_closed_request' }, 'client closed the connection before its request was complete');
      void reply.code(400).type('application/json').send(errorBody(400, 'client_closed_request', 'the client closed the connection'));
      return;
    }
    const { body, retryAfter } = toErrorResponse(err);
    if (body.statusCode >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: body.code, statusCode: body.statusCode }, body.message);
    if (retryAfter !== undefined) reply.header('Retry-After', String(retryAfter));
    void reply.code(body.statusCode).type('application/json').send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(errorBody(404, 'not_found', `route ${request.method} ${request.url.split('?')[0]} not found`));
  });
}
