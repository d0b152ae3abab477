// /api/v1/sessions: list, read, suspend and resume agent sessions.
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../auth/authenticate.js';
import type { EventRecorder } from '../audit/record-events.js';
import type { Db } from '../db/db.js';

export interface SessionRouteDeps {
  db: Db;
  auth: Authenticator;
  recorder: EventRecorder;
}

export function registerSessionRoutes(_app: FastifyInstance, _deps: SessionRouteDeps) {}
