// buildApp(config): the whole service as a Fastify instance, with its resources created from config and closed on close().
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyCors from '@fastify/cors';
import fastifyFormbody from '@fastify/formbody';
import fastifyRateLimit from '@fastify/rate-limit';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { createDb } from './db/create-db.js';
import { createPgDb } from './db/pg-db.js';
import { createReadReplica } from './db/read-replica.js';
import type { Db } from './db/db.js';
import { migrate } from './db/migrate.js';
import { createOrgReadSlots, type OrgReadSlots } from './db/org-read-slots.js';
import { createBus, type Bus } from './bus/create-bus.js';
import { createMetrics, storedEventLabels, type Metrics } from './metrics/metrics.js';
import { registerErrorHandling } from './http/error-handler.js';
import { registerHealthRoutes } from './http/health-routes.js';
import { registerDashboardRoutes } from './http/dashboard-routes.js';
import { registerOpenApi, registerOpenApiRoute } from './http/openapi.js';
import { registerSchemaCompilers } from './http/schema-compilers.js';
import { requestIdOf } from './http/request-id.js';
import { clientErrorHandler } from './http/client-errors.js';
import { frameworkErrors, MAX_PATH_PARAM_LENGTH } from './http/framework-errors.js';
import { createAuthRepo } from './auth/auth-repo.js';
import { createAuthenticator } from './auth/authenticate.js';
import { createApiKeyService } from './auth/api-keys.js';
import { registerAuthRoutes } from './auth/auth-routes.js';
import { registerAdminRoutes } from './auth/admin-routes.js';
import { createPasswordHasher } from './auth/password-hasher.js';
import { registerApiKeyRoutes } from './auth/api-key-routes.js';
import { seedDemo, type DemoCredentials } from './auth/seed.js';
import { createEventLog, type EventLog } from './audit/event-log/event-log.js';
import { rowSinkFor } from './audit/event-log/row-sink.js';
import { registerAuditRoutes } from './audit/audit-routes.js';
import { registerAuditStatsRoutes } from './audit/audit-stats-routes.js';
import { registerAuditExportRoutes } from './audit/audit-export-routes.js';
import { createRetentionJob, type RetentionJob } from './retention/retention-job.js';
import { registerRetentionRoutes } from './retention/retention-routes.js';
import { registerTextParsers } from './ingest/body-decoding.js';
import { INGEST_PREFIX, ingestPlugin } from './ingest/ingest-plugin.js';
import { loadOtlpTypes } from './ingest/otlp/proto-types.js';
import { createOtlpGrpcReceiver, type OtlpGrpcReceiver } from './ingest/otlp-grpc/otlp-grpc-receiver.js';
import { ingestSources } from './ingest/sources.js';
import { createStreamHub, type StreamHub } from './stream/stream-hub.js';
import { registerStreamRoutes } from './stream/stream-routes.js';
import { registerSessionRoutes } from './sessions/session-routes.js';
import { createAnomalyFeature } from './anomaly/anomaly-feature.js';
import { createProxyFeature, type AppendEvents, type ProxyFeature } from './proxy/proxy-feature.js';
import { Unavailable } from './shared/domain-errors.js';
import { createRecognition, type Recognition } from './recognition/recognition-service.js';
import { registerRecognitionRoutes } from './recognition/recognition-routes.js';
import { createVerifiableLog, type VerifiableLog } from './verify/verifiable-log.js';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-amz-firehose-access-key"]',
  'res.headers["set-cookie"]',
  'password',
  '*.password',
  'key',
  '*.key',
  'apiKey',
  '*.apiKey',
];

export interface BuildOptions {
  /** Where log lines go (tests capture them); defaults to stdout. */
  logStream?: NodeJS.WritableStream;
  /** Sees every route as it is registered (tests compare them with /openapi.json). */
  onRoute?: (route: RouteOptions) => void;
}

export interface AppContext {
  app: FastifyInstance;
  config: Config;
  db: Db;
  bus: Bus;
  metrics: Metrics;
  hub: StreamHub;
  /** The organizations' read slots (ORG_READ_SLOTS, ORG_READ_QUEUE_MAX), shared by every read path. */
  reads: OrgReadSlots;
  /** Removes expired events on a timer; one instance at a time runs a pass. */
  retention: RetentionJob;
  /** The event log: every append of every writer. */
  eventLog: EventLog;
  /** The MCP proxy (/mcp/:serverId and /api/v1/mcp/*). */
  proxy: ProxyFeature;
  /** Recognition profiles (built-in and the organizations' own) and the unrecognized tallies. */
  recognition: Recognition;
  /** Each organization's verifiable log: Merkle tree hashes, signed checkpoints, proofs (MERKLE_LOG). */
  verifiableLog: VerifiableLog;
  logger: Logger;
  /** The OTLP/gRPC receiver's bound port once the app is ready; null when OTLP_GRPC_PORT is unset. */
  otlpGrpcPort: () => number | null;
  /**
   * Seeds the demo account when SEED_DEMO is on and the embedded database is empty; returns the credentials to print,
   * else null. Called by the entry point only once the server listens, so credentials are never created unseen.
   */
  seedDemo(): Promise<DemoCredentials | null>;
}

export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<AppContext> {
  const logger = pino(
    {
      level: config.LOG_LEVEL,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    opts.logStream ?? process.stdout,
  );
  const metrics = createMetrics();
  // Read before any resource is opened: missing proto files stop the start with nothing to close.
  const otlpTypes = loadOtlpTypes();
  const db = await createDb(config, (err) => logger.warn({ err: { message: err.message } }, 'idle database connection error'));
  const bus = createBus(config, logger);
  // Lag-tolerant reads go to the replica while it is within DATABASE_READ_MAX_LAG_MS of the primary.
  const replica = createReadReplica({
    primary: db,
    replica: config.DATABASE_READ_URL ? createPgDb({ connectionString: config.DATABASE_READ_URL, max: config.PG_POOL_MAX, onError: (err) => logger.warn({ err: { message: err.message } }, 'idle replica connection error') }) : null,
    maxLagMs: config.DATABASE_READ_MAX_LAG_MS,
    checkMs: config.DATABASE_READ_LAG_CHECK_MS,
    onRead: (to) => metrics.replicaReads.inc({ to }),
    onLag: (ms) => metrics.replicaLagSeconds.set(Number.isFinite(ms) ? ms / 1000 : -1),
    onCheckError: (err) => logger.warn({ err: { message: err.message } }, 'replica lag check failed'),
  });
  try {
    if (config.MIGRATE_ON_START) await migrate(db);
    await bus.connected(3000);
  } catch (err) {
    await replica.close();
    await bus.close();
    await db.close();
    throw err;
  }

  const app: FastifyInstance = Fastify({
    loggerInstance: logger,
    bodyLimit: config.BODY_LIMIT_BYTES,
    // A request (headers and body) must arrive within REQUEST_TIMEOUT_MS, its headers within HEADERS_TIMEOUT_MS: a
    // trickled body cannot hold a connection. Node measures receiving the request only, so a stream that has answered
    // lives on. Connections are checked often enough for the timeouts to be kept to about a quarter of their length.
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    http: {
      headersTimeout: Math.min(config.HEADERS_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS),
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(Math.min(config.HEADERS_TIMEOUT_MS, config.REQUEST_TIMEOUT_MS) / 4))),
    },
    clientErrorHandler,
    // Session and key ids in paths may be up to 200 characters (URL-encoded, more); a longer one is a 414.
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    // What the router refuses before any route runs (a path parameter over the limit, a malformed URL) answers in the
    // one error shape too.
    frameworkErrors,
    trustProxy: config.TRUST_PROXY,
    // The header is read by requestIdOf, which accepts only short, plain ids.
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Requests arriving while closing get the service's own 503 (with Retry-After), below.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
  }) as unknown as FastifyInstance;

  let verifiableLog: VerifiableLog;
  try {
    verifiableLog = await createVerifiableLog({ config, db, logger });
  } catch (err) {
    await replica.close();
    await bus.close();
    await db.close();
    throw err;
  }

  const authRepo = createAuthRepo(db);
  const auth = createAuthenticator(config, authRepo);
  const keys = createApiKeyService(authRepo, bus.control);
  const hasher = createPasswordHasher({ concurrency: config.PASSWORD_HASH_CONCURRENCY, queueMax: config.PASSWORD_HASH_QUEUE_MAX });
  const eventLog = createEventLog({
    db,
    transport: bus.transport,
    logger,
    sink: rowSinkFor(config.EVENT_LOG_SINK, db.kind),
    optimisticAppend: config.EVENT_LOG_OPTIMISTIC_APPEND,
    maxQueuedWritesPerOrg: config.ORG_WRITE_QUEUE_MAX,
    maxGroupEvents: config.ORG_WRITE_GROUP_MAX_EVENTS,
    merkle: verifiableLog.step ?? undefined,
    onTransaction: (requests) => {
      metrics.writeTransactions.inc();
      if (requests > 1) metrics.groupedWrites.inc(requests);
    },
  });
  eventLog.onCommitted((orgId, stored, batch) => {
    const counts = new Map<string, number>();
    for (const e of stored) counts.set(`${e.source}/${e.type}`, (counts.get(`${e.source}/${e.type}`) ?? 0) + 1);
    for (const [k, n] of counts) {
      const [source, type] = k.split('/');
      metrics.eventsStored.inc(storedEventLabels(source, type), n);
    }
    if (batch) metrics.eventsPublished.inc(batch.events.length);
    if (stored.length) verifiableLog.checkpointer?.appended(orgId, stored.length);
  });
  const retention = createRetentionJob({
    db,
    logger,
    defaultDays: config.AUDIT_RETENTION_DAYS,
    intervalMs: config.RETENTION_INTERVAL_MS,
    batchRows: config.RETENTION_BATCH_ROWS,
    leaseMs: config.RETENTION_LEASE_MS,
  });
  // Every read path of an organization (listing, export, stats, replay and gap-fill pages) takes one of its slots.
  const reads = createOrgReadSlots({
    slots: config.ORG_READ_SLOTS,
    queueMax: config.ORG_READ_QUEUE_MAX,
    onWait: () => metrics.orgReadWaits.inc(),
    onRefuse: () => metrics.orgReadRefusals.inc(),
  });
  const onPageCut = () => metrics.pagesCutByBytes.inc();
  const hub = createStreamHub({ config, db, replica, transport: bus.transport, control: bus.control, authRepo, logger, metrics, reads });
  const recognitionSettings = {
    builtinProfiles: config.RECOGNITION_BUILTIN_PROFILES,
    maxProfilesPerOrg: config.RECOGNITION_MAX_PROFILES_PER_ORG,
    maxExpressionChars: config.RECOGNITION_MAX_EXPRESSION_CHARS,
    maxExpressionNodes: config.RECOGNITION_MAX_EXPRESSION_NODES,
    maxCostPerRecord: config.RECOGNITION_MAX_COST_PER_RECORD,
    maxWorkPerRecord: config.RECOGNITION_MAX_WORK_PER_RECORD,
    maxWorkPerRequest: config.RECOGNITION_MAX_WORK_PER_REQUEST,
    cacheMs: config.RECOGNITION_PROFILE_CACHE_MS,
    unrecognizedMaxNames: config.RECOGNITION_UNRECOGNIZED_MAX_NAMES,
    sampleBytes: config.RECOGNITION_UNRECOGNIZED_SAMPLE_BYTES,
  };
  const recognition = createRecognition({ db, control: bus.control, logger, settings: recognitionSettings });
  const anomaly = createAnomalyFeature({ config, db, auth, eventLog, logger, metrics });
  // The proxy's one dependency on the write path: appending events to an organization's log.
  const appendEvents: AppendEvents = (orgId, events) => eventLog.append(orgId, events, { internal: true });
  let proxy: ProxyFeature;
  try {
    proxy = await createProxyFeature({ config, db, control: bus.control, auth, append: appendEvents, logger });
  } catch (err) {
    await anomaly.close();
    await replica.close();
    await bus.close();
    await db.close();
    throw err;
  }

  if (opts.onRoute) app.addHook('onRoute', opts.onRoute);
  registerErrorHandling(app);
  registerSchemaCompilers(app);
  // Collects every route's declared schema from here on into /openapi.json.
  const sources = ingestSources({
    firehoseMaxRecords: config.FIREHOSE_MAX_RECORDS,
    otlp: { types: otlpTypes, maxSpans: config.OTLP_MAX_SPANS_PER_EXPORT, maxLogRecords: config.OTLP_MAX_LOG_RECORDS_PER_EXPORT, maxMessages: config.OTLP_MAX_MESSAGES_PER_EXPORT },
  });
  await registerOpenApi(app, sources.flatMap((s) => (s.keyHeader ? [s.keyHeader] : [])));
  // Once shutdown starts, new requests (on kept-alive connections) are refused so clients retry on another instance.
  let closing = false;
  app.addHook('onRequest', async () => {
    if (closing) throw new Unavailable('this instance is shutting down; retry on another', { code: 'shutting_down', retryAfterSeconds: 1 });
  });
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody, { bodyLimit: config.BODY_LIMIT_BYTES });
  await app.register(fastifyCors, {
    // Only listed dashboard origins get a CORS grant, with credentials; never "*".
    origin: (origin, cb) => cb(null, origin !== undefined && config.CORS_ORIGINS.includes(origin)),
    credentials: true,
    methods: ['GET', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ['Content-Type', 'Authorization', 'Last-Event-ID'],
    maxAge: 600,
  });
  await app.register(fastifyRateLimit, {
    global: false,
    // After body parsing, so the login limit can key on the email as well as the address.
    hook: 'preHandler',
    errorResponseBuilder: (_req, ctx) => ({
      statusCode: 429,
      error: 'Too Many Requests',
      code: 'too_many_requests',
      message: `too many attempts; retry in ${Math.ceil(ctx.ttl / 1000)} s`,
    }),
  });
  registerTextParsers(app);

  registerHealthRoutes(app, { db, bus, metrics });
  registerAuthRoutes(app, { config, repo: authRepo, auth, control: bus.control, hasher });
  if (config.ADMIN_TOKEN) registerAdminRoutes(app, { adminToken: config.ADMIN_TOKEN, repo: authRepo, keys, hasher });
  if (config.ADMIN_TOKEN) registerRetentionRoutes(app, { adminToken: config.ADMIN_TOKEN, db, defaultDays: config.AUDIT_RETENTION_DAYS });
  registerApiKeyRoutes(app, { auth, repo: authRepo, keys });
  registerAuditRoutes(app, { replica, auth, reads, pageMaxBytes: config.READ_PAGE_MAX_BYTES, onPageCut, searchMaxRangeHours: config.SEARCH_MAX_RANGE_HOURS, searchTimeoutMs: config.SEARCH_QUERY_TIMEOUT_MS, countMax: config.AUDIT_COUNT_MAX });
  registerAuditStatsRoutes(app, { replica, auth, reads, queryTimeoutMs: config.STATS_QUERY_TIMEOUT_MS });
  registerAuditExportRoutes(app, {
    replica,
    auth,
    reads,
    pageRows: config.EXPORT_PAGE_ROWS,
    pageMaxBytes: config.READ_PAGE_MAX_BYTES,
    onPageCut,
    maxPerOrg: config.EXPORT_MAX_PER_ORG,
    idleTimeoutMs: config.EXPORT_IDLE_TIMEOUT_MS,
    searchMaxRangeHours: config.SEARCH_MAX_RANGE_HOURS,
  });
  await app.register(ingestPlugin, {
    prefix: INGEST_PREFIX,
    sources,
    auth,
    eventLog,
    metrics,
    bodyLimit: config.BODY_LIMIT_BYTES,
    maxEntries: config.INGEST_MAX_ENTRIES,
    eventCost: { maxEventBytes: config.INGEST_MAX_EVENT_BYTES },
    recognition,
  });
  // OTLP/gRPC on its own port (OTLP_GRPC_PORT), listening with the app and closed before its resources.
  let otlpGrpc: { receiver: OtlpGrpcReceiver; port: number } | null = null;
  if (config.OTLP_GRPC_PORT !== undefined) {
    const grpcPort = config.OTLP_GRPC_PORT;
    const receiver = createOtlpGrpcReceiver({
      types: otlpTypes,
      limits: { maxSpans: config.OTLP_MAX_SPANS_PER_EXPORT, maxLogRecords: config.OTLP_MAX_LOG_RECORDS_PER_EXPORT, maxMessages: config.OTLP_MAX_MESSAGES_PER_EXPORT },
      auth,
      eventLog,
      eventCost: { maxEventBytes: config.INGEST_MAX_EVENT_BYTES },
      metrics,
      logger,
      maxEntries: config.INGEST_MAX_ENTRIES,
      maxMessageBytes: config.BODY_LIMIT_BYTES,
      maxConcurrentStreams: config.OTLP_GRPC_MAX_CONCURRENT_STREAMS,
      recognition,
    });
    app.addHook('onReady', async () => {
      otlpGrpc = { receiver, port: await receiver.listen(config.HOST, grpcPort) };
      logger.info({ port: otlpGrpc.port }, 'OTLP/gRPC receiver listening');
    });
    app.addHook('preClose', async () => {
      await receiver.close();
    });
  }
  registerRecognitionRoutes(app, {
    db,
    auth,
    reads,
    recognition,
    settings: recognitionSettings,
    sources,
    limits: { bodyBytes: config.BODY_LIMIT_BYTES, maxEntries: config.INGEST_MAX_ENTRIES },
  });
  registerStreamRoutes(app, { auth, hub });
  // Checkpoints issued here reach every instance's streams over the control channel.
  verifiableLog.onIssued((orgId, c) => {
    void bus.control
      .publish({ kind: 'checkpoint', orgId, size: c.size, rootHash: c.root.toString('base64'), note: c.note })
      .catch((err: Error) => logger.warn({ err: { message: err.message }, orgId }, 'checkpoint not broadcast to streams'));
  });
  registerSessionRoutes(app, { db, auth, eventLog });
  anomaly.register(app);
  proxy.register(app);
  verifiableLog.register(app, { auth, reads });
  registerOpenApiRoute(app);
  await registerDashboardRoutes(app);

  // Streams end before the server waits for open connections; resources close after the last request.
  app.addHook('preClose', async () => {
    closing = true;
    hub.shutdown();
  });
  app.addHook('onClose', async () => {
    await retention.stop();
    await verifiableLog.close();
    await proxy.close();
    await anomaly.close();
    await bus.close();
    await replica.close();
    await db.close();
  });

  const seed = async () => (config.SEED_DEMO && db.kind === 'pglite' ? seedDemo(authRepo, keys) : null);
  retention.start();
  proxy.start();
  verifiableLog.start();
  return { app, config, db, bus, metrics, hub, reads, eventLog, proxy, recognition, verifiableLog, logger, retention, seedDemo: seed, otlpGrpcPort: () => otlpGrpc?.port ?? null };
}
