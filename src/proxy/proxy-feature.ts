// The MCP proxy as one feature: its secrets key, configuration cache, upstream client, limits, records and routes.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticate.js';
import type { Config } from '../config.js';
import type { Db } from '../db/db.js';
import type { ControlChannel } from '../bus/control-channel.js';
import { createProxyAuth } from './proxy-auth.js';
import { createCallRecorder, type AppendEvents } from './call-recorder.js';
import { registerMcpRoutes } from './mcp-routes.js';
import { createOrgProxyConfigs } from './org-proxy-config.js';
import { registerProxyAdminRoutes } from './proxy-admin-routes.js';
import { createProxyLimiter } from './proxy-limits.js';
import { createSecretBox, loadSecretsKey } from './secrets-key.js';
import { createUpstreamClient } from './upstream-client.js';

export interface ProxyDeps {
  config: Config;
  db: Db;
  auth: Authenticator;
  /** Key revocations drop the proxy's cached keys at once. */
  control: ControlChannel;
  /** The event log's append (see AppendEvents). */
  append: AppendEvents;
  logger: Logger;
}

export type { AppendEvents };

export async function createProxyFeature(deps: ProxyDeps) {
  const c = deps.config;
  const key = await loadSecretsKey({ configured: c.PROXY_SECRETS_KEY, dataDir: c.DATA_DIR, embedded: !c.DATABASE_URL });
  const box = key ? createSecretBox(key) : null;
  const bounds = { maxChars: c.PROXY_RULE_MAX_CHARS, maxNodes: c.PROXY_RULE_MAX_NODES };
  const configs = createOrgProxyConfigs({ db: deps.db, box, bounds, cacheMs: c.PROXY_CONFIG_CACHE_MS, maxServers: c.PROXY_MAX_SERVERS_PER_ORG, upstreamTimeoutMaxMs: c.PROXY_UPSTREAM_TIMEOUT_MAX_MS, logger: deps.logger });
  const upstreams = createUpstreamClient({ connectTimeoutMs: c.PROXY_CONNECT_TIMEOUT_MS, maxHeaderBytes: c.PROXY_MAX_UPSTREAM_HEADER_BYTES, allowPrivate: c.PROXY_ALLOW_PRIVATE_UPSTREAMS });
  const limiter = createProxyLimiter({
    callsPerKey: c.PROXY_MAX_CALLS_PER_KEY,
    callsPerSession: c.PROXY_MAX_CALLS_PER_SESSION,
    requestsPerKey: c.PROXY_MAX_REQUESTS_PER_KEY,
    streamsPerKey: c.PROXY_MAX_STREAMS_PER_KEY,
    streamsTotal: c.PROXY_MAX_STREAMS_TOTAL,
  });
  const recorder = createCallRecorder({ db: deps.db, append: deps.append, logger: deps.logger, maxPending: 10_000, sweepIntervalMs: c.PROXY_SWEEP_INTERVAL_MS });

  return {
    recorder,
    limiter,
    register(app: FastifyInstance) {
      registerProxyAdminRoutes(app, {
        db: deps.db,
        auth: deps.auth,
        configs,
        box,
        bounds,
        maxServers: c.PROXY_MAX_SERVERS_PER_ORG,
        maxRules: c.PROXY_MAX_RULES_PER_ORG,
        defaultTimeoutMs: c.PROXY_UPSTREAM_TIMEOUT_MS,
        maxTimeoutMs: c.PROXY_UPSTREAM_TIMEOUT_MAX_MS,
        allowPrivateUpstreams: c.PROXY_ALLOW_PRIVATE_UPSTREAMS,
      });
      registerMcpRoutes(app, {
        db: deps.db,
        authenticate: createProxyAuth({ auth: deps.auth, control: deps.control, cacheMs: c.PROXY_AUTH_CACHE_MS, staleMs: c.PROXY_AUTH_STALE_MS }),
        configs,
        upstreams,
        limiter,
        recorder,
        logger: deps.logger,
        settings: {
          maxBodyBytes: c.PROXY_MAX_BODY_BYTES,
          drainTimeoutMs: c.PROXY_STREAM_DRAIN_TIMEOUT_MS,
          maxInspectedBytes: c.PROXY_MAX_INSPECTED_MESSAGE_BYTES,
          storedArgumentsBytes: c.PROXY_STORED_ARGUMENTS_BYTES,
          sweepGraceMs: c.PROXY_SWEEP_GRACE_MS,
        },
      });
    },
    /** Starts the sweep of intents left by calls that never completed (at once, then every PROXY_SWEEP_INTERVAL_MS). */
    start() {
      recorder.start();
    },
    async close() {
      await recorder.close();
      upstreams.close();
    },
  };
}

export type ProxyFeature = Awaited<ReturnType<typeof createProxyFeature>>;
