// Every setting of the service, read from an environment object and validated with zod.
import { z } from 'zod';

const bool = (def: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? def : v === 'true' || v === '1' || v === 'yes'));

const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(def);

const num = (def: number, min = 0) => z.coerce.number().min(min).default(def);

const list = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );

const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

export const configSchema = z.object({
  HOST: z.string().default('0.0.0.0'),
  PORT: int(3000, 0, 65535),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TRUST_PROXY: bool(false),

  DATABASE_URL: z.preprocess(emptyAsUndefined, z.string().url().optional()),
  DATA_DIR: z.string().default('./.data'),
  PG_POOL_MAX: int(10, 1, 500),
  MIGRATE_ON_START: bool(true),
  SEED_DEMO: bool(true),

  REDIS_URL: z.preprocess(emptyAsUndefined, z.string().url().optional()),
  REDIS_PREFIX: z.string().default('audit-stream:'),

  ADMIN_TOKEN: z.preprocess(emptyAsUndefined, z.string().min(16).optional()),
  COOKIE_SECURE: bool(false),
  COOKIE_SAME_SITE: z.enum(['lax', 'strict', 'none']).default('lax'),
  SESSION_TTL_HOURS: num(168, 0.001),
  CORS_ORIGINS: list,
  LOGIN_RATE_LIMIT_MAX: int(10, 1),
  LOGIN_RATE_LIMIT_WINDOW_SECONDS: int(60, 1),
  LOGIN_RATE_LIMIT_PER_ADDRESS_MAX: int(30, 1),
  PASSWORD_HASH_CONCURRENCY: int(1, 1, 64),
  PASSWORD_HASH_QUEUE_MAX: int(16, 0),

  BODY_LIMIT_BYTES: int(5 * 1024 * 1024, 1024),
  REQUEST_TIMEOUT_MS: int(30_000, 100),
  HEADERS_TIMEOUT_MS: int(10_000, 100),
  INGEST_MAX_ENTRIES: int(10_000, 1),
  FIREHOSE_MAX_RECORDS: int(10_000, 1),
  OTLP_MAX_SPANS_PER_EXPORT: int(10_000, 1),
  OTLP_MAX_LOG_RECORDS_PER_EXPORT: int(10_000, 1),
  /** OTLP/gRPC receiver port; unset (or empty) keeps it off, 0 picks a free port. */
  OTLP_GRPC_PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).optional()),
  /** Exports in flight on one OTLP/gRPC connection. */
  OTLP_GRPC_MAX_CONCURRENT_STREAMS: int(16, 1, 1000),
  ORG_WRITE_QUEUE_MAX: int(32, 0),
  /** Most events of the ingest requests of one organization stored together in one transaction (group commit); 0 = off. */
  ORG_WRITE_GROUP_MAX_EVENTS: int(10_000, 0),
  STATS_QUERY_TIMEOUT_MS: int(5000, 1, 600_000),
  /** Most events one page of an export reads (one query; the chunk held in memory). */
  EXPORT_PAGE_ROWS: int(1000, 1, 10_000),
  /** Exports of one organization in progress at once on one instance; beyond, 429. */
  EXPORT_MAX_PER_ORG: int(4, 1, 1000),
  /** An export whose client has taken no bytes for this long is ended (the client resumes with `cursor`). */
  EXPORT_IDLE_TIMEOUT_MS: int(60_000, 100, 3_600_000),
  /** Days an organization's events are kept (from when they were stored) unless it has its own period; unset = forever. */
  AUDIT_RETENTION_DAYS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(36_500).optional()),
  /** How often each instance tries to run a retention pass (one instance at a time runs it). */
  RETENTION_INTERVAL_MS: int(600_000, 1000, 86_400_000),
  /** Most events one retention delete statement removes. */
  RETENTION_BATCH_ROWS: int(10_000, 1, 100_000),
  /** How long a retention pass holds the job between renewals; another instance may take over after it. */
  RETENTION_LEASE_MS: int(300_000, 1000, 86_400_000),

  SSE_RETRY_MS: int(2000, 0),
  SSE_HEARTBEAT_MS: int(15_000, 10),
  SSE_REPLAY_LIMIT: int(10_000, 1),
  SSE_BUFFER_LIMIT_BYTES: int(1024 * 1024, 1024),
  SSE_DRAIN_TIMEOUT_MS: int(30_000, 10),
  SSE_MAX_STREAMS_PER_ORG: int(2000, 1),
  SSE_MAX_STREAMS_PER_KEY: int(500, 1),
  SSE_MAX_STREAMS_PER_USER: int(100, 1),
  SSE_MAX_STREAMS_TOTAL: int(20_000, 1),
  AUTH_RECHECK_MS: int(30_000, 10),

  ANOMALY_WINDOW_SECONDS: int(60, 1, 3600),
  ANOMALY_MIN_RATE: num(100),
  ANOMALY_MULTIPLIER: num(3, 1),
  ANOMALY_COOLDOWN_SECONDS: int(300, 0),
  ANOMALY_MAX_KEYS: int(20_000, 1),

  SHUTDOWN_TIMEOUT_MS: int(10_000, 0),
});

export type Config = z.output<typeof configSchema>;

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Pure: validates an environment-like object and returns the typed config, or throws ConfigError naming each bad variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((i) => {
        const name = String(i.path[0] ?? '(root)');
        const shown = /TOKEN|URL|PASSWORD|SECRET/.test(name) ? '(value hidden)' : JSON.stringify(env[name]);
        return `${name}: ${i.message} (got ${shown})`;
      }),
    );
  }
  return result.data;
}

/** The config used by tests and embedded tools: defaults plus overrides, validated the same way. */
export function testConfig(overrides: Record<string, string | undefined> = {}): Config {
  return loadConfig({ LOG_LEVEL: 'silent', SEED_DEMO: 'false', ...overrides });
}
