// Test backends: embedded (PGlite + in-process bus) always; real Postgres + Redis when TEST_DATABASE_URL and TEST_REDIS_URL are set.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface Backend {
  name: 'embedded' | 'real';
  /** Environment overrides giving each test file its own database and Redis namespace. */
  env: Record<string, string>;
  /**
   * Environment for another app beside the first: the same database and Redis for the real backend; for the embedded
   * one, a data directory of its own (an embedded directory takes one process, or app, at a time).
   */
  sibling(): Promise<Record<string, string>>;
  cleanup(): Promise<void>;
}

export const realBackendAvailable = Boolean(process.env.TEST_DATABASE_URL && process.env.TEST_REDIS_URL);

/** A fresh, empty Postgres database on the TEST_DATABASE_URL server; dropped by cleanup. */
export async function createTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.TEST_DATABASE_URL!;
  const name = `as_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
      await c.end();
    },
  };
}

export async function embeddedBackend(): Promise<Backend> {
  const dirs = [await mkdtemp(path.join(tmpdir(), 'audit-stream-test-'))];
  return {
    name: 'embedded',
    env: { DATA_DIR: dirs[0] },
    async sibling() {
      dirs.push(await mkdtemp(path.join(tmpdir(), 'audit-stream-test-')));
      return { DATA_DIR: dirs[dirs.length - 1] };
    },
    cleanup: async () => {
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}

export async function realBackend(): Promise<Backend> {
  const db = await createTestDatabase();
  const env = { DATABASE_URL: db.url, REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: `as-test-${randomBytes(6).toString('hex')}:` };
  return {
    name: 'real',
    env,
    sibling: async () => env,
    cleanup: () => db.drop(),
  };
}

/** The backends a suite runs against: names usable with describe.each. */
export const backendNames: Backend['name'][] = realBackendAvailable ? ['embedded', 'real'] : ['embedded'];

/** Every backend with each row sink of the event log (EVENT_LOG_SINK), for the suites of the log's invariants. */
export const backendSinks: [Backend['name'], 'copy' | 'insert'][] = backendNames.flatMap((b) => (['copy', 'insert'] as const).map((s): [Backend['name'], 'copy' | 'insert'] => [b, s]));

export function makeBackend(name: Backend['name']): Promise<Backend> {
  return name === 'real' ? realBackend() : embeddedBackend();
}
