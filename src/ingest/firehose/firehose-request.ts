// What a Firehose delivery request says besides its records: request id, source ARN, common attributes, credentials.
import { inflateRawSync, inflateSync, gunzipSync, constants as zlibConstants } from 'node:zlib';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { commonAttributesSchema } from './firehose-schemas.js';
import { Unauthenticated } from '../../shared/domain-errors.js';

export const REQUEST_ID_HEADER = 'x-amz-firehose-request-id';
export const ACCESS_KEY_HEADER = 'x-amz-firehose-access-key';
export const SOURCE_ARN_HEADER = 'x-amz-firehose-source-arn';
export const COMMON_ATTRIBUTES_HEADER = 'x-amz-firehose-common-attributes';

/** Characters of common attributes (keys and values) kept on each event; attributes past it are counted, not copied. */
export const MAX_COMMON_ATTRIBUTES_CHARS = 1024;
/** Longest source ARN kept (a Firehose stream ARN is far shorter). */
export const MAX_SOURCE_ARN_LENGTH = 512;
/** Bytes of an unread body looked at for its requestId when a request is refused before its body is read. */
export const PEEK_BYTES = 16 * 1024;
const PEEK_TIMEOUT_MS = 1000;

function header(headers: Readonly<IncomingHttpHeaders>, name: string): string | null {
  const v = headers[name];
  return typeof v === 'string' && v.trim() ? v.trim() : null;
}

export function headerRequestId(headers: Readonly<IncomingHttpHeaders>): string | null {
  return header(headers, REQUEST_ID_HEADER)?.slice(0, 200) ?? null;
}

/** X-Amz-Firehose-Source-Arn when it looks like an ARN of a sane length, else null. */
export function sourceArnOf(headers: Readonly<IncomingHttpHeaders>): string | null {
  const v = header(headers, SOURCE_ARN_HEADER);
  return v !== null && v.length <= MAX_SOURCE_ARN_LENGTH && /^arn:[\x21-\x7e]+$/.test(v) ? v : null;
}

export interface CommonAttributes {
  /** The attributes kept on each event, in the order sent, up to MAX_COMMON_ATTRIBUTES_CHARS. */
  attributes?: Record<string, string>;
  /** How many attributes were not copied to each event because of that bound. */
  omitted?: number;
}

/** X-Amz-Firehose-Common-Attributes (the stream's configured endpoint parameters), bounded per event. */
export function commonAttributesOf(headers: Readonly<IncomingHttpHeaders>): CommonAttributes {
  const v = headers[COMMON_ATTRIBUTES_HEADER];
  if (typeof v !== 'string' || v.length > 16 * 1024) return {};
  let parsed;
  try {
    parsed = commonAttributesSchema.safeParse(JSON.parse(v));
  } catch {
    return {};
  }
  if (!parsed.success) return {};
  const acc = Object.create(null) as Record<string, string>;
  let chars = 0;
  let omitted = 0;
  for (const [k, value] of Object.entries(parsed.data.commonAttributes)) {
    if (chars + k.length + value.length > MAX_COMMON_ATTRIBUTES_CHARS) omitted++;
    else {
      acc[k] = value;
      chars += k.length + value.length;
    }
  }
  return { attributes: { ...acc }, omitted: omitted || undefined };
}

/**
 * Runs before authentication: a request without X-Amz-Firehose-Access-Key is refused (401) with a message naming that header,
 * also (especially) when it sent `Authorization: Bearer` the way the other ingest routes take keys.
 */
export async function requireAccessKeyHeader(request: FastifyRequest): Promise<void> {
  if (header(request.headers, ACCESS_KEY_HEADER) !== null) return;
  const hint = request.headers.authorization ? ' (this request sent an Authorization header instead; Firehose sends the endpoint access key in X-Amz-Firehose-Access-Key)' : '';
  throw new Unauthenticated(`an API key is required in the X-Amz-Firehose-Access-Key header${hint}`);
}

function decodePrefix(bytes: Buffer, encoding: string): string {
  const opts = { finishFlush: zlibConstants.Z_SYNC_FLUSH, maxOutputLength: 4 * PEEK_BYTES };
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(bytes, opts).toString('utf8');
    if (encoding === 'deflate') return inflateSync(bytes, opts).toString('utf8');
    return bytes.toString('utf8');
  } catch {
    try {
      return encoding === 'deflate' ? inflateRawSync(bytes, opts).toString('utf8') : '';
    } catch {
      return '';
    }
  }
}

/**
 * The body's `requestId`, read from at most PEEK_BYTES of a body that was never read (the request was refused before
 * parsing, e.g. a bad key): Firehose puts requestId first. Null when absent, unreadable, or not sent within 1 s.
 */
export async function peekBodyRequestId(request: FastifyRequest): Promise<string | null> {
  const raw = request.raw;
  const hasBody = (request.headers['content-length'] ?? '0') !== '0' || request.headers['transfer-encoding'] !== undefined;
  if (!hasBody || raw.readableDidRead || raw.readableEnded || raw.destroyed) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', done).off('error', done);
      // The rest of the body is read and dropped, as Node does for any body a handler leaves unread.
      raw.resume();
      resolve();
    };
    const onData = (c: Buffer) => {
      chunks.push(c);
      size += c.length;
      if (size >= PEEK_BYTES) done();
    };
    const timer = setTimeout(done, PEEK_TIMEOUT_MS);
    raw.on('data', onData).once('end', done).once('error', done);
  });
  const encoding = String(request.headers['content-encoding'] ?? '').trim().toLowerCase();
  const text = decodePrefix(Buffer.concat(chunks).subarray(0, PEEK_BYTES), encoding);
  const m = /"requestId"\s*:\s*("(?:[^"\\]|\\.){1,400}")/.exec(text);
  if (!m) return null;
  try {
    const id = (JSON.parse(m[1]) as string).trim();
    return id ? id.slice(0, 200) : null;
  } catch {
    return null;
  }
}
