// Registers every ingest endpoint: raw JSON events, CloudWatch Logs, Firehose and Datadog.
import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../auth/authenticate.js';
import type { IngestDeps } from './ingest-result.js';
import { registerRawIngestRoutes } from './raw-routes.js';
import { registerCloudWatchRoutes } from './cloudwatch-routes.js';
import { registerFirehoseRoutes } from './firehose-routes.js';
import { registerDatadogRoutes } from './datadog-routes.js';

export function registerIngestRoutes(app: FastifyInstance, deps: IngestDeps & { auth: Authenticator; firehoseMaxRecords: number }) {
  registerRawIngestRoutes(app, deps);
  registerCloudWatchRoutes(app, deps);
  registerFirehoseRoutes(app, { ...deps, maxRecords: deps.firehoseMaxRecords });
  registerDatadogRoutes(app, deps);
}
