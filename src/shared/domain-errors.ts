// Errors of the domain (repositories, services, pure code): what went wrong, never an HTTP status; routes and the one
// error handler choose the answer.

export class DomainError extends Error {
  constructor(
    /** A stable machine-readable code, answered as the error body's `code`. */
    readonly code: string,
    message: string,
    /** Extra fields the answer carries (for example the current status of a conflict). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** The input cannot be accepted as it is (retrying it unchanged cannot help). */
export class InvalidInput extends DomainError {}
/** The input exceeds a documented bound. */
export class TooLarge extends DomainError {}
/** The thing named does not exist (or is not visible to the caller). */
export class NotFound extends DomainError {}
/** The thing exists but is not in a state the operation applies to. */
export class Conflict extends DomainError {}
/** A backend the operation needs is unavailable; a retry later may succeed. */
export class Unavailable extends DomainError {}
