// Errors of the domain (bad input, too large, not found, ...) with no HTTP in them; the one error handler picks each status.

export interface IssueDetail {
  path: string;
  message: string;
}

/** What went wrong, independent of any transport. */
export type DomainErrorKind =
  | 'invalid_input'
  | 'unauthenticated'
  | 'forbidden'
  | 'too_large'
  | 'unsupported_type'
  | 'not_found'
  | 'conflict'
  | 'unprocessable'
  | 'rate_limited'
  | 'unavailable';

export interface DomainErrorOptions {
  /** A more precise machine-readable code than the kind's default (e.g. `invalid_json`, `busy`). */
  code?: string;
  /** Which parts of the input were wrong. */
  issues?: IssueDetail[];
  /** When a retry may succeed (rate_limited, unavailable). */
  retryAfterSeconds?: number;
  /** Further fields for the answer (e.g. a conflicting state). */
  details?: Record<string, unknown>;
}

export class DomainError extends Error {
  constructor(
    public readonly kind: DomainErrorKind,
    message: string,
    public readonly options: DomainErrorOptions = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** The input cannot be read or does not have the expected shape; a retry cannot help. */
export class InvalidInput extends DomainError {
  constructor(message: string, issues?: IssueDetail[], code?: string) {
    super('invalid_input', message, { issues, code });
  }
}

/** No credential, or one that is not valid (unknown, revoked, expired). */
export class Unauthenticated extends DomainError {
  constructor(message = 'missing or invalid credentials') {
    super('unauthenticated', message);
  }
}

/** A valid credential that may not do this (a missing scope, a disallowed origin); `code` says why. */
export class Forbidden extends DomainError {
  constructor(message: string, code?: string) {
    super('forbidden', message, { code });
  }
}

/** The input comes in a form (media type, content encoding) that is not read here. */
export class UnsupportedType extends DomainError {
  constructor(message: string) {
    super('unsupported_type', message);
  }
}

/** The input exceeds a documented bound (size, entries, nesting). */
export class TooLarge extends DomainError {
  constructor(message: string) {
    super('too_large', message);
  }
}

export class NotFound extends DomainError {
  constructor(message = 'not found') {
    super('not_found', message);
  }
}

/** The thing is not in a state that allows the change. */
export class Conflict extends DomainError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('conflict', message, { details });
  }
}

/** Well-formed input that contradicts what was recorded before (e.g. an idempotency key reused for another request). */
export class Unprocessable extends DomainError {
  constructor(message: string, code: string) {
    super('unprocessable', message, { code });
  }
}

/** Too much work of one party is waiting; retry after `retryAfterSeconds`. */
export class RateLimited extends DomainError {
  constructor(message: string, retryAfterSeconds: number) {
    super('rate_limited', message, { retryAfterSeconds });
  }
}

/** A resource the service needs is unavailable or saturated for now; retry after `retryAfterSeconds`. */
export class Unavailable extends DomainError {
  constructor(message = 'storage is unavailable, retry later', opts: { code?: string; retryAfterSeconds?: number } = {}) {
    super('unavailable', message, { code: opts.code ?? 'storage_unavailable', retryAfterSeconds: opts.retryAfterSeconds ?? 5 });
  }
}
