// Every setting of the service, read from an environment object and validated with zod.
import { z } from 'zod';
import { parseClusterSeeds } from './shared/redis-target.js';

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
  /**
   * A streaming replica of DATABASE_URL's database: the listing, counts, stats, exports and stream replay read it while
   * its measured lag is within DATABASE_READ_MAX_LAG_MS; everything that must see a just-committed event reads the primary.
   */
  DATABASE_READ_URL: z.preprocess(emptyAsUndefined, z.string().url().optional()),
  DATABASE_READ_MAX_LAG_MS: int(2000, 0, 3_600_000),
  DATABASE_READ_LAG_CHECK_MS: int(250, 10, 60_000),
  MIGRATE_ON_START: bool(true),
  SEED_DEMO: bool(true),

  REDIS_URL: z.preprocess(emptyAsUndefined, z.string().url().optional()),
  /**
   * Seeds of a Redis Cluster, comma-separated `host:port` or `redis[s]://[user:password@]host:port`: the bus (sharded
   * pub/sub) and the anomaly counters use the cluster. Instead of REDIS_URL, never with it.
   */
  REDIS_CLUSTER_NODES: z.preprocess(emptyAsUndefined, z.string().optional()).transform((v, ctx) => {
    if (!v) return [];
    try {
      return parseClusterSeeds(v);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
      return z.NEVER;
    }
  }),
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
  /** Protobuf messages (resources, scopes, spans, log records, attributes, values...) or JSON objects and arrays in one OTLP export, counted before decoding. */
  OTLP_MAX_MESSAGES_PER_EXPORT: int(500_000, 1),
  /** Most bytes of JSON one ingested event takes, metadata included (at least 16 KiB, MIN_EVENT_BYTES); larger values are cut with `[truncated]`. */
  INGEST_MAX_EVENT_BYTES: int(64 * 1024, 16 * 1024, 64 * 1024 * 1024),
  /** OTLP/gRPC receiver port; unset (or empty) keeps it off, 0 picks a free port. */
  OTLP_GRPC_PORT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).optional()),
  /** Exports in flight on one OTLP/gRPC connection. */
  OTLP_GRPC_MAX_CONCURRENT_STREAMS: int(16, 1, 1000),
  ORG_WRITE_QUEUE_MAX: int(32, 0),
  /** Most events of the ingest requests of one organization stored together in one transaction (group commit); 0 = off. */
  ORG_WRITE_GROUP_MAX_EVENTS: int(10_000, 0),
  /**
   * How the event log writes its rows: `copy` (binary COPY), `insert` (jsonb_to_recordset statements), or `auto`, the
   * faster of the two on the backend in use (docs/performance.md).
   */
  EVENT_LOG_SINK: z.enum(['auto', 'copy', 'insert']).default('auto'),
  /**
   * Appends write their rows without first looking up which sender identities are stored; only when the dedupe index
   * refuses one is the transaction run again with the lookup (the answer is the same either way).
   */
  EVENT_LOG_OPTIMISTIC_APPEND: bool(true),
  STATS_QUERY_TIMEOUT_MS: int(5000, 1, 600_000),
  /**
   * Most bytes one page of stored events holds (listing, export, stream replay and gap filling): a page ends early,
   * with a cursor continuing after its last event, once its events' stored bytes would pass this; an event larger than
   * it is a page by itself.
   */
  READ_PAGE_MAX_BYTES: int(4 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  /** Database reads (listing, export pages, stats, stream replay and gap-fill pages) of one organization at once, per instance. */
  ORG_READ_SLOTS: int(2, 1, 500),
  /** Reads of one organization waiting for a slot, per instance; beyond, a new request is answered 429 (continuing ones wait). */
  ORG_READ_QUEUE_MAX: int(64, 0, 100_000),
  /** Free text (q) over stored events scans its time range: the longest range it may search, in hours. */
  SEARCH_MAX_RANGE_HOURS: int(24, 1, 8760),
  /** Longest a free-text listing, or a count of matching events, may run (statement_timeout); then 503. */
  SEARCH_QUERY_TIMEOUT_MS: int(5000, 1, 600_000),
  /** Most matching events GET /api/v1/audit-events/count counts; beyond, it answers this number with capped: true. */
  AUDIT_COUNT_MAX: int(10_000, 1, 100_000_000),
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
  /**
   * Most bytes of an organization's recently delivered frames (with their index and filter selections) an instance
   * keeps to serve resuming streams without reading the database; 0 keeps none (every resume reads the database).
   */
  SSE_RECENT_WINDOW_BYTES: int(8 * 1024 * 1024, 0, 1024 * 1024 * 1024),
  /** Most bytes the recent windows of all organizations with streams on an instance keep together (shared equally). */
  SSE_RECENT_WINDOW_TOTAL_BYTES: int(256 * 1024 * 1024, 0, 16 * 1024 * 1024 * 1024),
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

  /** AES-256-GCM key (base64 of 32 bytes) encrypting upstream header secrets; unset: generated into DATA_DIR (embedded only). */
  PROXY_SECRETS_KEY: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** Largest MCP request body the proxy takes (413 as a JSON-RPC error). */
  PROXY_MAX_BODY_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024),
  /** Default time an upstream has for one request (a server may set its own, up to PROXY_UPSTREAM_TIMEOUT_MAX_MS). */
  PROXY_UPSTREAM_TIMEOUT_MS: int(60_000, 100, 3_600_000),
  PROXY_UPSTREAM_TIMEOUT_MAX_MS: int(600_000, 100, 3_600_000),
  /** Time to connect to an upstream. */
  PROXY_CONNECT_TIMEOUT_MS: int(5000, 50, 60_000),
  /** Largest response head (status line and headers) taken from an upstream. */
  PROXY_MAX_UPSTREAM_HEADER_BYTES: int(16 * 1024, 1024, 1024 * 1024),
  /** Whether upstream URLs may resolve to loopback, private or link-local addresses (set for local MCP servers). */
  PROXY_ALLOW_PRIVATE_UPSTREAMS: bool(false),
  /** tools/call requests in flight at once per API key and per session (per instance); beyond, 429. */
  PROXY_MAX_CALLS_PER_KEY: int(64, 1, 100_000),
  PROXY_MAX_CALLS_PER_SESSION: int(16, 1, 100_000),
  /** Proxied requests of any method in flight at once per API key (per instance), streams included; beyond, 429. */
  PROXY_MAX_REQUESTS_PER_KEY: int(256, 1, 100_000),
  /** Long-lived proxied streams (GET streams, subscriptions/listen) open at once per key and in all (per instance). */
  PROXY_MAX_STREAMS_PER_KEY: int(16, 1, 100_000),
  PROXY_MAX_STREAMS_TOTAL: int(2000, 1, 1_000_000),
  /** A client that reads nothing of a proxied stream for this long, while its backlog is full, is disconnected. */
  PROXY_STREAM_DRAIN_TIMEOUT_MS: int(30_000, 10, 3_600_000),
  /** Bytes of one response message the proxy reads to learn a call's outcome; a larger one passes through unread. */
  PROXY_MAX_INSPECTED_MESSAGE_BYTES: int(4 * 1024 * 1024, 1024, 256 * 1024 * 1024),
  /** Bytes of a call's arguments kept in its record (JSON); larger arguments are stored truncated, with their size. */
  PROXY_STORED_ARGUMENTS_BYTES: int(8192, 0, 1024 * 1024),
  /** Upstream servers and policy rules an organization may have. */
  PROXY_MAX_SERVERS_PER_ORG: int(100, 1, 100_000),
  PROXY_MAX_RULES_PER_ORG: int(200, 1, 10_000),
  /** Longest CEL condition of a rule, in characters, and most nodes of its parsed expression. */
  PROXY_RULE_MAX_CHARS: int(2000, 10, 100_000),
  PROXY_RULE_MAX_NODES: int(200, 5, 100_000),
  /** How long an instance reuses a key's authentication for proxied calls (a revocation reaches every instance at once over the bus; this bounds one Redis lost). */
  PROXY_AUTH_CACHE_MS: int(5000, 0, 600_000),
  /** While the database cannot be read, a key that authenticated within this long still may call through the proxy. */
  PROXY_AUTH_STALE_MS: int(300_000, 0, 86_400_000),
  /** How long an instance uses an organization's servers, rules and settings before reading them again. */
  PROXY_CONFIG_CACHE_MS: int(2000, 0, 600_000),
  /** How often each instance looks for intents of calls that never completed; the grace added to a call's deadline. */
  PROXY_SWEEP_INTERVAL_MS: int(5000, 100, 3_600_000),
  PROXY_SWEEP_GRACE_MS: int(5000, 0, 3_600_000),

  /** Whether the built-in recognition profiles read records (off: the organizations' own profiles and the generic reading only). */
  RECOGNITION_BUILTIN_PROFILES: bool(true),
  /** Recognition profiles an organization may add (tried before the built-in ones). */
  RECOGNITION_MAX_PROFILES_PER_ORG: int(50, 1, 10_000),
  /** Longest CEL expression of a profile, in characters, and most nodes of its parsed expression. */
  RECOGNITION_MAX_EXPRESSION_CHARS: int(2000, 10, 100_000),
  RECOGNITION_MAX_EXPRESSION_NODES: int(300, 5, 100_000),
  /** What an organization's profiles may cost on one record (nodes × (1 + comprehensions × 256), summed over the profiles tried). */
  RECOGNITION_MAX_COST_PER_RECORD: int(100_000, 1, 1_000_000_000),
  /** Run-time work of an organization's profiles (characters of strings their functions read and make, 64 per list or map entry made) on one record, and summed over one request. */
  RECOGNITION_MAX_WORK_PER_RECORD: int(1_000_000, 1, 1_000_000_000),
  RECOGNITION_MAX_WORK_PER_REQUEST: int(50_000_000, 1, 100_000_000_000),
  /** How long an instance uses an organization's compiled profiles before reading them again (a change reaches every instance at once over the bus). */
  RECOGNITION_PROFILE_CACHE_MS: int(60_000, 0, 3_600_000),
  /** (source, name) rows of unrecognized records kept per organization; later names are counted under `(other)`. */
  RECOGNITION_UNRECOGNIZED_MAX_NAMES: int(500, 1, 100_000),
  /** Longest sample kept per unrecognized (source, name), in UTF-8 bytes. */
  RECOGNITION_UNRECOGNIZED_SAMPLE_BYTES: int(2048, 0, 65_536),

  /** Keep each organization's verifiable log (Merkle tree hashes in the append transaction, signed checkpoints). */
  MERKLE_LOG: bool(true),
  /** The service's public host name: checkpoint origins are `<PUBLIC_HOST>/orgs/<orgId>`, and it names the embedded default signing key. */
  PUBLIC_HOST: z.string().regex(/^[^\s+/]+$/, 'a host name without spaces, + or /').default('localhost'),
  /** The checkpoint signing key (Go note format, PRIVATE+KEY+name+hexid+base64); unset: DATA_DIR/log-signing.key (embedded only). */
  SIGNING_KEY_FILE: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** A checkpoint is signed once an organization has this many events past its latest one ... */
  CHECKPOINT_EVERY_EVENTS: int(1000, 1, 100_000_000),
  /** ... or, when it has any, this often. */
  CHECKPOINT_INTERVAL_MS: int(10_000, 100, 86_400_000),
  /** Most stored events one append adds to a log left behind (events appended while MERKLE_LOG was off). */
  MERKLE_CATCHUP_EVENTS: int(1000, 1, 1_000_000),

  SHUTDOWN_TIMEOUT_MS: int(10_000, 0),
}).superRefine((c, ctx) => {
  if (c.DATABASE_READ_URL && !c.DATABASE_URL) ctx.addIssue({ code: 'custom', path: ['DATABASE_READ_URL'], message: 'needs DATABASE_URL (a replica of that database)' });
  if (c.REDIS_CLUSTER_NODES.length === 0) return;
  if (c.REDIS_URL) ctx.addIssue({ code: 'custom', path: ['REDIS_CLUSTER_NODES'], message: 'set REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a cluster), not both' });
  // In a cluster the organization id is the hash tag ({...}) of its channel and keys; a brace in the prefix would take its place.
  if (/[{}]/.test(c.REDIS_PREFIX)) ctx.addIssue({ code: 'custom', path: ['REDIS_PREFIX'], message: 'must not contain { or } when REDIS_CLUSTER_NODES is set' });
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
        const shown = /TOKEN|URL|PASSWORD|SECRET|NODES/.test(name) ? '(value hidden)' : JSON.stringify(env[name]);
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
