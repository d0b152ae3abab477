// A fresh Postgres database per scenario and organizations with API keys, provisioned through the admin API.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ADMIN_DB_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface BenchDatabase {
  name: string;
  url: string;
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

/** Databases of this run not dropped yet (an interrupted run drops them on its way out). */
const live = new Set<string>();

async function dropDatabase(name: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_DB_URL });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  await c.end();
  live.delete(name);
}

export async function dropLiveDatabases(): Promise<void> {
  await Promise.all([...live].map((name) => dropDatabase(name).catch(() => undefined)));
}

export async function createDatabase(): Promise<BenchDatabase> {
  const name = `as_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_DB_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  live.add(name);
  const url = new URL(ADMIN_DB_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]) {
      const c = new pg.Client({ connectionString: url.toString() });
      await c.connect();
      try {
        return (await c.query<R>(sql, params)).rows;
      } finally {
        await c.end();
      }
    },
    drop: () => dropDatabase(name),
  };
}

export interface BenchOrg {
  id: string;
  key: string;
}

async function adminPost(baseUrl: string, token: string, path: string, body: unknown): Promise<Record<string, string>> {
  const r = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await r.json()) as Record<string, string>;
  if (r.status !== 201) throw new Error(`${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

/** An organization and one key with the given scopes (default: reading, ingesting and operating sessions). */
export async function createOrg(baseUrl: string, adminToken: string, name: string, scopes = ['events:read', 'ingest:write', 'sessions:write']): Promise<BenchOrg> {
  const org = await adminPost(baseUrl, adminToken, '/api/v1/admin/organizations', { name });
  const key = await adminPost(baseUrl, adminToken, `/api/v1/admin/organizations/${org.id}/api-keys`, {
    name: `${name} bench key`,
    scopes,
  });
  return { id: org.id, key: key.key };
}

/** Environment of one service instance in a scenario: its database, a Redis prefix of the run, quiet anomaly rule. */
export function serviceEnv(db: BenchDatabase, redisPrefix: string, adminToken: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    ADMIN_TOKEN: adminToken,
    ANOMALY_MIN_RATE: '1000000000',
    SSE_MAX_STREAMS_PER_ORG: '20000',
    SSE_MAX_STREAMS_PER_KEY: '20000',
    SSE_MAX_STREAMS_TOTAL: '20000',
    ...extra,
  };
}
