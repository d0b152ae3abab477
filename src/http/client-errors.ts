// Answers to requests Node refuses before they reach a route (too slow, headers too large, malformed): the JSON shape.
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { errorBody } from './error-handler.js';

const ANSWERS: Record<string, [number, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'the request (headers and body) did not arrive in time'],
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'request headers are too large'],
};

/** Fastify's clientErrorHandler: a JSON error on the socket, then the connection is closed; logged without a stack. */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] = ANSWERS[err.code ?? ''] ?? [400, 'invalid_request', 'malformed request'];
  this.log.info({ code, statusCode: status }, message);
  if (socket.writable && socket.bytesWritten === 0) {
    const answer = errorBody(status, code, message);
    const body = JSON.stringify(answer);
    socket.write(`HTTP/1.1 ${status} ${answer.error}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }
  socket.destroy();
}
