// HTTP error classes that routes and hooks throw on purpose; the error handler turns each into the one JSON error shape.
import type { IssueDetail } from '../shared/domain-errors.js';

export type { IssueDetail };

export class AppError extends Error {
  constructor(
    public readonly statusCode: number,
    public readonly code: string,
    message: string,
    public readonly extra: { issues?: IssueDetail[]; retryAfterSeconds?: number; details?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, issues?: IssueDetail[]) {
    super(400, 'invalid_request', message, { issues });
  }
}
export class UnauthorizedError extends AppError {
  constructor(message = 'missing or invalid credentials') {
    super(401, 'unauthorized', message);
  }
}
export class ForbiddenError extends AppError {
  constructor(message: string, code = 'forbidden') {
    super(403, code, message);
  }
}
export class NotFoundError extends AppError {
  constructor(message = 'not found') {
    super(404, 'not_found', message);
  }
}
export class ConflictError extends AppError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(409, 'conflict', message, { details });
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(message: string) {
    super(413, 'payload_too_large', message);
  }
}
export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super(415, 'unsupported_media_type', message);
  }
}
export class TooManyRequestsError extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, 'too_many_requests', message, { retryAfterSeconds });
  }
}
export class StorageUnavailableError extends AppError {
  constructor(message = 'storage is unavailable, retry later', retryAfterSeconds = 5) {
    super(503, 'storage_unavailable', message, { retryAfterSeconds });
  }
}
