// Request ids for log lines: a caller's X-Request-Id is kept only when short and plain, else the service makes one.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** At most 64 characters of letters, digits, '.', '_' and '-': enough for UUIDs, trace ids and load balancer ids. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The request id of a request: the caller's X-Request-Id when it is safe to put in a log line, else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}
