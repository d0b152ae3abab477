// The Idempotency-Key header of an ingest request and the claim it makes (key + digest of the route and body).
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { IdempotencyClaim } from '../audit/ingest-requests-repo.js';
import { InvalidInput } from '../shared/domain-errors.js';

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Longest Idempotency-Key accepted. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;
const KEY = /^[\x21-\x7e]+$/;

/**
 * The request's `Idempotency-Key` (a bare token or a quoted string, as in the IETF draft), or null when absent. A
 * present but unusable key (empty, longer than 200 characters, not visible ASCII, sent twice) is a 400.
 */
export function idempotencyKeyOf(request: FastifyRequest): string | null {
  const raw = request.headers[IDEMPOTENCY_KEY_HEADER];
  if (raw === undefined) return null;
  const value = Array.isArray(raw) ? null : raw.trim();
  const key = value !== null && value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  if (key === null || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY.test(key)) {
    throw new InvalidInput('Idempotency-Key must be one value of 1 to 200 visible ASCII characters', [{ path: 'headers.idempotency-key', message: 'invalid' }]);
  }
  return key;
}

/** The claim a request makes with its key: the key and a digest of the route and body it came with. */
export function idempotencyClaim(key: string | null, route: string, body: unknown): IdempotencyClaim | undefined {
  if (key === null) return undefined;
  const text = typeof body === 'string' ? body : (JSON.stringify(body) ?? '');
  return { key, fingerprint: createHash('sha256').update(route).update('\n').update(text).digest('base64url') };
}
