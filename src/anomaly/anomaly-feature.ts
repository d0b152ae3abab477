// Rate-spike detection on tool calls and the /api/v1/anomaly-settings routes.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticate.js';
import type { EventRecorder } from '../audit/record-events.js';
import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import type { Metrics } from '../metrics/metrics.js';

export interface AnomalyDeps {
  config: Config;
  db: Db;
  auth: Authenticator;
  recorder: EventRecorder;
  logger: Logger;
  metrics: Metrics;
}

export function createAnomalyFeature(_deps: AnomalyDeps) {
  return {
    register(_app: FastifyInstance) {},
    async close() {},
  };
}
