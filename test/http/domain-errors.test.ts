// The one error handler's mapping of domain errors (the one error vocabulary) to the one error shape.
import { describe, expect, it } from 'vitest';
import { toErrorResponse } from '../../src/http/error-handler.js';
import { Conflict, Forbidden, InvalidInput, NotFound, RateLimited, TooLarge, Unauthenticated, Unavailable, Unprocessable, UnsupportedType } from '../../src/shared/domain-errors.js';

describe('error mapping', () => {
  it('gives each domain error its status, code, issues, details and Retry-After', () => {
    expect(toErrorResponse(new InvalidInput('bad', [{ path: 'a', message: 'm' }])).body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'bad', code: 'invalid_request', issues: [{ path: 'a', message: 'm' }] });
    expect(toErrorResponse(new InvalidInput('not json', undefined, 'invalid_json')).body).toMatchObject({ statusCode: 400, code: 'invalid_json' });
    expect(toErrorResponse(new TooLarge('big')).body).toMatchObject({ statusCode: 413, code: 'payload_too_large', message: 'big' });
    expect(toErrorResponse(new NotFound('gone')).body).toMatchObject({ statusCode: 404, code: 'not_found', message: 'gone' });
    expect(toErrorResponse(new Conflict('already', { status: 'suspended' })).body).toMatchObject({ statusCode: 409, code: 'conflict', status: 'suspended' });
    expect(toErrorResponse(new Unprocessable('reused', 'idempotency_key_reused')).body).toMatchObject({ statusCode: 422, code: 'idempotency_key_reused' });
    expect(toErrorResponse(new RateLimited('wait', 3))).toMatchObject({ body: { statusCode: 429, code: 'too_many_requests' }, retryAfter: 3 });
    expect(toErrorResponse(new Unavailable())).toMatchObject({ body: { statusCode: 503, code: 'storage_unavailable' }, retryAfter: 5 });
    expect(toErrorResponse(new Unavailable('busy', { code: 'busy', retryAfterSeconds: 1 }))).toMatchObject({ body: { statusCode: 503, code: 'busy' }, retryAfter: 1 });
  });

  it('answers credentials and media types by their kind', () => {
    expect(toErrorResponse(new Unauthenticated('no')).body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'no', code: 'unauthorized' });
    expect(toErrorResponse(new Forbidden('scope', 'missing_scope')).body).toMatchObject({ statusCode: 403, code: 'missing_scope' });
    expect(toErrorResponse(new Forbidden('no')).body).toMatchObject({ statusCode: 403, code: 'forbidden' });
    expect(toErrorResponse(new UnsupportedType('type')).body).toMatchObject({ statusCode: 415, code: 'unsupported_media_type' });
  });
});
