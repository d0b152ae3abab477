// Body parsers and content-type checks for the log ingest routes (CloudWatch, Firehose, Datadog), installed in their own scope.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../http/errors.js';
import { gunzipBounded, isGzip } from './compression.js';
import { parseJsonBytes, parseJsonText } from './json-text.js';

/** Content types carrying gzip bytes without a Content-Encoding header (Lambda forwarders that post awslogs.data decoded). */
export const BINARY_TYPES = ['application/octet-stream', 'application/gzip', 'application/x-gzip'];

/** Decodes a body buffer: gzip (sniffed by magic bytes, inflated up to `limit` bytes) or plain, then UTF-8 JSON. */
export async function parseMaybeGzippedJson(bytes: Buffer, limit: number, what = 'body'): Promise<unknown> {
  let data: Buffer = bytes;
  if (isGzip(bytes)) {
    const inflated = await gunzipBounded(bytes, limit);
    if (!inflated.ok) {
      if (inflated.reason === 'too_large') throw new PayloadTooLargeError(`${what}: ${inflated.message} (BODY_LIMIT_BYTES)`);
      throw new BadRequestError(`${what}: ${inflated.message}`);
    }
    data = inflated.bytes;
  }
  return parseJsonBytes(data, what);
}

function bodyLimitOf(request: FastifyRequest): number {
  return request.routeOptions.bodyLimit ?? 1024 * 1024;
}

/**
 * Replaces the JSON parser in `scope` with one that keeps big integer ids exact and inflates gzip bodies sent without
 * Content-Encoding; with `binary`, also takes octet-stream/gzip bodies. Call inside an encapsulated plugin.
 */
export function installLogBodyParsers(scope: FastifyInstance, opts: { binary: boolean }): void {
  scope.removeContentTypeParser(['application/json']);
  const parse = async (request: FastifyRequest, body: Buffer) => parseMaybeGzippedJson(body, bodyLimitOf(request));
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, parse);
  if (opts.binary) scope.addContentTypeParser(BINARY_TYPES, { parseAs: 'buffer' }, parse);
}

/** The media type of a request, lower-cased, without parameters; '' when absent. */
export function mediaTypeOf(request: FastifyRequest): string {
  return String(request.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
}

/** An onRequest hook answering 415 (before the body is read) unless the Content-Type is one of `allowed`. */
export function requireContentType(allowed: readonly string[]) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const type = mediaTypeOf(request);
    const length = request.headers['content-length'];
    const hasBody = (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
    if (type === '' && !hasBody) return;
    if (!allowed.includes(type)) {
      throw new UnsupportedMediaTypeError(`Content-Type ${type ? type.slice(0, 80) : '(none)'} is not accepted here; send ${allowed.join(', ')}`);
    }
  };
}

/** The parsed body, with a text/plain body (the shared text parser gives a string) read as JSON. */
export function textBodyAsJson(request: FastifyRequest): unknown {
  return mediaTypeOf(request) === 'text/plain' && typeof request.body === 'string' ? parseJsonText(request.body) : request.body;
}
