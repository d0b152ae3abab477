// Content types of the ingest routes: the 415 check (before the body is read) and one body parser per BodyKind.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidInput, TooLarge, UnsupportedType } from '../shared/domain-errors.js';
import { gunzipBounded, isGzip } from './compression.js';
import type { BodyKind } from './ingest-source.js';
import { parseJsonBytes } from './json-text.js';

/** Content types carrying gzip bytes without a Content-Encoding header (Lambda forwarders that post awslogs.data decoded). */
export const BINARY_TYPES = ['application/octet-stream', 'application/gzip', 'application/x-gzip'];

/** Decodes a body buffer: gzip (sniffed by magic bytes, inflated up to `limit` bytes) or plain, then UTF-8 JSON. */
export async function parseMaybeGzippedJson(bytes: Buffer, limit: number, what = 'body'): Promise<unknown> {
  let data: Buffer = bytes;
  if (isGzip(bytes)) {
    const inflated = await gunzipBounded(bytes, limit);
    if (!inflated.ok) {
      if (inflated.reason === 'too_large') throw new TooLarge(`${what}: ${inflated.message} (BODY_LIMIT_BYTES)`);
      throw new InvalidInput(`${what}: ${inflated.message}`);
    }
    data = inflated.bytes;
  }
  return parseJsonBytes(data, what);
}

export function bodyLimitOf(request: FastifyRequest): number {
  return request.routeOptions.bodyLimit ?? 1024 * 1024;
}

/** The media type of a request, lower-cased, without parameters; '' when absent. */
export function mediaTypeOf(request: FastifyRequest): string {
  return String(request.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
}

/** An onRequest hook answering 415 (before the body is read) unless the Content-Type is one of `allowed`; none is a 415 too. */
export function requireContentType(allowed: readonly string[]) {
  return async (request: FastifyRequest, _reply: FastifyReply) => {
    const type = mediaTypeOf(request);
    if (!allowed.includes(type)) {
      throw new UnsupportedType(`Content-Type ${type ? type.slice(0, 80) : '(none)'} is not accepted here; send ${allowed.join(', ')}`);
    }
  };
}

function replaceParser(scope: FastifyInstance, type: string): void {
  if (scope.hasContentTypeParser(type)) scope.removeContentTypeParser(type);
}

/**
 * Installs in `scope` (an encapsulated plugin of one source) the parser of each accepted type. `json` and `form` keep
 * the app's own parsers (Fastify's JSON parser; @fastify/formbody), the others replace whatever the app has.
 */
export function installBodyParsers(scope: FastifyInstance, accepts: Readonly<Record<string, BodyKind>>): void {
  for (const [type, kind] of Object.entries(accepts)) {
    if (kind === 'json') {
      if (type !== 'application/json') {
        replaceParser(scope, type);
        scope.addContentTypeParser(type, { parseAs: 'string' }, scope.getDefaultJsonParser('error', 'error'));
      }
    } else if (kind === 'form') {
      if (type !== 'application/x-www-form-urlencoded') throw new Error(`form bodies are read only as application/x-www-form-urlencoded, not ${type}`);
    } else if (kind === 'exact-json') {
      replaceParser(scope, type);
      scope.addContentTypeParser(type, { parseAs: 'buffer' }, async (request: FastifyRequest, body: Buffer) => parseMaybeGzippedJson(body, bodyLimitOf(request)));
    } else if (kind === 'text') {
      replaceParser(scope, type);
      scope.addContentTypeParser(type, { parseAs: 'string' }, (_request, body, done) => done(null, body));
    } else {
      replaceParser(scope, type);
      scope.addContentTypeParser(type, { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    }
  }
}
