// Fastify's frameworkErrors: what the router refuses before any route runs answers in the one error shape.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, toErrorResponse } from './error-handler.js';

/** Longest path parameter (session and key ids are at most 200 characters, more when URL-encoded); longer: 414. */
export const MAX_PATH_PARAM_LENGTH = 1024;

/**
 * A path parameter over MAX_PATH_PARAM_LENGTH (414 `uri_too_long`), a URL that cannot be decoded (400), a failed
 * route constraint (400): the body is `{statusCode, error, message, code}` like every other error, not Fastify's own.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const body =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? errorBody(414, 'uri_too_long', `a path segment is longer than ${MAX_PATH_PARAM_LENGTH} characters`)
      : toErrorResponse(error).body;
  request.log.info({ code: body.code, statusCode: body.statusCode }, body.message);
  void reply.code(body.statusCode).type('application/json; charset=utf-8').send(body);
}
