// Rate-spike detection on tool calls, the /api/v1/anomaly-settings routes and the anomaly acknowledgement routes.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticate.js';
import type { EventLog } from '../audit/event-log/event-log.js';
import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import type { Metrics } from '../metrics/metrics.js';
import { registerAcknowledgementRoutes } from './acknowledgement-routes.js';
import { emitAnomaly } from './anomaly-events.js';
import { createMemoryRateCounter } from './memory-rate-counter.js';
import type { RateCounter } from './rate-counter.js';
import { createRedisRateCounter } from './redis-rate-counter.js';
import { redisTarget } from '../shared/redis-target.js';
import { defaultSettings, readSettings } from './settings-repo.js';
import { registerSettingsRoutes } from './settings-routes.js';
import { createSpikeMonitor } from './spike-monitor.js';

export interface AnomalyDeps {
  config: Config;
  db: Db;
  auth: Authenticator;
  eventLog: EventLog;
  logger: Logger;
  metrics: Metrics;
  /** The detector's clock (ms since epoch); Date.now unless a test drives time. */
  now?: () => number;
}

/** Counts are shared through Redis (or a Redis Cluster) when one is set (every instance sees them); in process otherwise. */
function createCounter(config: Config, logger: Logger): RateCounter {
  const target = redisTarget(config);
  if (target) return createRedisRateCounter({ target, prefix: config.REDIS_PREFIX, logger, maxKeys: config.ANOMALY_MAX_KEYS });
  return createMemoryRateCounter(config.ANOMALY_MAX_KEYS);
}

export function createAnomalyFeature(deps: AnomalyDeps) {
  const logger = deps.logger.child({ component: 'anomaly' });
  const defaults = defaultSettings(deps.config);
  const counter = createCounter(deps.config, logger);
  const monitor = createSpikeMonitor({
    counter,
    settingsOf: (orgId) => readSettings(deps.db, orgId, defaults),
    emit: async (alert) => {
      await emitAnomaly(deps.eventLog, alert);
      deps.metrics.anomalies.inc({ anomaly_type: 'rate_spike' });
      logger.info({ orgId: alert.orgId, serverId: alert.serverId, toolName: alert.toolName, currentRate: alert.evaluation.currentRate, threshold: alert.evaluation.threshold }, 'rate spike');
    },
    logger,
    now: deps.now ?? Date.now,
  });
  deps.eventLog.onCommitted((orgId, stored) => monitor.observe(orgId, stored));

  return {
    register(app: FastifyInstance) {
      registerSettingsRoutes(app, { db: deps.db, auth: deps.auth, defaults });
      registerAcknowledgementRoutes(app, { db: deps.db, auth: deps.auth });
    },
    /** Resolves once every tool call committed so far has been evaluated (tests and shutdown). */
    idle: () => monitor.idle(),
    async close() {
      await monitor.close();
      await counter.close();
    },
  };
}
