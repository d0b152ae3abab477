// Request body decoding: gzip/deflate Content-Encoding (bounded by the body limit) for ingest routes, and the app's NDJSON/text parsers.
import { createGunzip, createInflate } from 'node:zlib';
import type { FastifyInstance, FastifyRequest, preParsingAsyncHookHandler } from 'fastify';
import { UnsupportedType } from '../shared/domain-errors.js';

/**
 * preParsing hook: decompresses gzip/deflate bodies. Fastify applies bodyLimit to the stream returned here, so a gzip
 * bomb stops at the decompressed limit (413).
 */
export const decodeContentEncoding: preParsingAsyncHookHandler = async (request: FastifyRequest, _reply, payload) => {
  const enc = String(request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (enc === 'identity' || enc === '') return payload;
  let decoder;
  if (enc === 'gzip' || enc === 'x-gzip') decoder = createGunzip();
  else if (enc === 'deflate') decoder = createInflate();
  else throw new UnsupportedType(`unsupported Content-Encoding ${enc.slice(0, 40)}; use gzip, deflate or none`);
  // A truncated or corrupt stream surfaces as a 400 from the parser.
  decoder.on('error', (err: Error & { statusCode?: number; code?: string }) => {
    err.statusCode = 400;
  });
  payload.on('error', (err) => decoder.destroy(err));
  payload.pipe(decoder);
  // Fastify compares Content-Length with what it reads; the decoded length differs, so the encoded one is reported here.
  (decoder as unknown as { receivedEncodedLength: number }).receivedEncodedLength = 0;
  payload.on('data', (c: Buffer) => {
    (decoder as unknown as { receivedEncodedLength: number }).receivedEncodedLength += c.length;
  });
  return decoder;
};

/** Content types beyond JSON that ingest routes take as text: NDJSON and plain text. */
export function registerTextParsers(app: FastifyInstance) {
  app.addContentTypeParser(['application/x-ndjson', 'application/ndjson', 'application/jsonl', 'text/plain'], { parseAs: 'string' }, (_req, body, done) => {
    done(null, body);
  });
}
