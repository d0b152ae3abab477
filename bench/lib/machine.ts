// What the figures were measured on: CPUs, memory, Node, Postgres and Redis versions, date, and the load of the machine.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { Redis } from 'ioredis';
import pg from 'pg';
import { ADMIN_DB_URL, REDIS_URL } from './provision.js';

export interface MachineInfo {
  date: string;
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  os: string;
  node: string;
  postgres: string;
  redis: string;
  /** 1-minute load average when the run started (other work on the machine skews the figures). */
  loadAverageAtStart: number;
}

export function loadAverage(): number {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return os.loadavg()[0];
  }
}

export async function machineInfo(): Promise<MachineInfo> {
  const c = new pg.Client({ connectionString: ADMIN_DB_URL });
  await c.connect();
  const pgVersion = (await c.query<{ server_version: string }>('SHOW server_version')).rows[0].server_version;
  await c.end();
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const info = await redis.info('server');
  redis.disconnect();
  return {
    date: new Date().toISOString(),
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres: pgVersion.split(' ')[0],
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    loadAverageAtStart: loadAverage(),
  };
}

/** Deletes every Redis key of this run's prefix (anomaly counters), so runs leave nothing behind. */
export async function cleanRedis(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) deleted += await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
  return deleted;
}
