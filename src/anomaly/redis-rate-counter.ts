// RateCounter over Redis (one node or a cluster): per-key hashes of window buckets and minutes, a session zset and an
// alert gate, each updated by one Lua call.
import type { Logger } from 'pino';
import { createRedisClient, type RedisTarget } from '../shared/redis-target.js';
import { baselineMinutes, GATE_RETENTION_MS, MAX_TRACKED_SESSIONS, minuteOf, retentionMs, windowBuckets, type RateCounter, type RecordInput } from './rate-counter.js';

/**
 * KEYS: window bucket hash, minute hash, session zset.
 * ARGV: count, current bucket, first counted bucket, current minute, first baseline minute, now ms,
 *       oldest session score to drop, max sessions, key ttl ms, then session ids.
 * Adds the calls, drops buckets, minutes and sessions that fell out, and returns {window count, minute, count, ...}.
 */
const RECORD_LUA = `
local n = tonumber(ARGV[1])
redis.call('HINCRBY', KEYS[1], ARGV[2], n)
redis.call('HINCRBY', KEYS[2], ARGV[4], n)
local firstBucket = tonumber(ARGV[3])
local sum = 0
local buckets = redis.call('HGETALL', KEYS[1])
for i = 1, #buckets, 2 do
  if tonumber(buckets[i]) >= firstBucket then sum = sum + tonumber(buckets[i + 1])
  else redis.call('HDEL', KEYS[1], buckets[i]) end
end
local firstMinute = tonumber(ARGV[5])
local out = { sum }
local minutes = redis.call('HGETALL', KEYS[2])
for i = 1, #minutes, 2 do
  if tonumber(minutes[i]) >= firstMinute then
    out[#out + 1] = minutes[i]
    out[#out + 1] = minutes[i + 1]
  else redis.call('HDEL', KEYS[2], minutes[i]) end
end
if #ARGV > 9 then
  local args = {}
  for i = 10, #ARGV do
    args[#args + 1] = ARGV[6]
    args[#args + 1] = ARGV[i]
  end
  redis.call('ZADD', KEYS[3], unpack(args))
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[7])
redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(tonumber(ARGV[8]) + 1))
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('PEXPIRE', KEYS[2], ARGV[9])
redis.call('PEXPIRE', KEYS[3], ARGV[9])
return out
`;

/** KEYS: gate. ARGV: now ms, cooldown ms, ttl ms. Lets one caller through per cooldown; stores the time it did. */
const GATE_LUA = `
local last = redis.call('GET', KEYS[1])
local now = tonumber(ARGV[1])
if last and now - tonumber(last) < tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1
`;

/**
 * KEYS: the index of counted keys (a zset scored by last use). ARGV: now ms, key, max keys, retention ms.
 * Marks the key used, forgets keys unused for the retention, and pops the least recently used beyond max keys
 * (returned, so their structures are deleted): Redis holds at most max keys' counts, like the in-process counter.
 */
const INDEX_LUA = `
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[4]))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local excess = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3])
if excess <= 0 then return {} end
local popped = redis.call('ZPOPMIN', KEYS[1], excess)
local out = {}
for i = 1, #popped, 2 do out[#out + 1] = popped[i] end
return out
`;

interface CounterCommands {
  anomalyIndex(...args: (string | number)[]): Promise<string[]>;
  anomalyRecord(...args: (string | number)[]): Promise<(string | number)[]>;
  anomalyGate(...args: (string | number)[]): Promise<number>;
}

export interface RedisRateCounterOptions {
  /** One Redis (REDIS_URL) or a cluster (REDIS_CLUSTER_NODES). */
  target: RedisTarget;
  /** Prefix of every key (config.REDIS_PREFIX). */
  prefix: string;
  logger: Logger;
  /** Keys (server, tool pairs of all organizations) whose counts are kept at most; least recently used beyond. */
  maxKeys: number;
}

const ERROR_LOG_INTERVAL_MS = 30_000;

export function createRedisRateCounter(opts: RedisRateCounterOptions): RateCounter {
  const redis = createRedisClient(
    opts.target,
    { lazyConnect: true, connectionName: 'audit-stream-anomaly', maxRetriesPerRequest: 1, commandTimeout: 2000, retryStrategy: (n: number) => Math.min(50 * 2 ** n, 2000) },
    { lazyConnect: true },
  );
  let lastErrorLog = 0;
  redis.on('error', (err: Error) => {
    if (Date.now() - lastErrorLog < ERROR_LOG_INTERVAL_MS) return;
    lastErrorLog = Date.now();
    opts.logger.warn({ err: { message: err.message } }, 'anomaly detector redis connection error');
  });
  redis.defineCommand('anomalyRecord', { numberOfKeys: 3, lua: RECORD_LUA });
  redis.defineCommand('anomalyGate', { numberOfKeys: 1, lua: GATE_LUA });
  redis.defineCommand('anomalyIndex', { numberOfKeys: 1, lua: INDEX_LUA });
  const commands = redis as unknown as CounterCommands;
  // The hash tag is the key's organization (the part before its first ':'): each script's keys share one slot on a
  // Redis Cluster, the slot of the organization's channel, so an org's counting and its events live on one shard.
  const base = (key: string) => {
    const colon = key.indexOf(':');
    return colon < 0 ? `${opts.prefix}anomaly:{${key}}` : `${opts.prefix}anomaly:{${key.slice(0, colon)}}${key.slice(colon)}`;
  };

  return {
    kind: 'redis',
    async record(key: string, input: RecordInput) {
      const { current, first } = windowBuckets(input.nowMs, input.windowSeconds);
      const ttl = retentionMs(input.windowSeconds);
      const out = await commands.anomalyRecord(
        `${base(key)}:buckets`,
        `${base(key)}:minutes`,
        `${base(key)}:sessions`,
        input.count,
        current,
        first,
        minuteOf(input.nowMs),
        baselineMinutes(input.nowMs, input.windowSeconds).first,
        input.nowMs,
        input.nowMs - input.windowSeconds * 1000,
        MAX_TRACKED_SESSIONS,
        ttl,
        ...input.sessions.slice(0, MAX_TRACKED_SESSIONS),
      );
      // Then the index, then the deletes: every write of a key's counts is followed by its entry in the index, and every
      // eviction by a delete, so concurrent callers never leave counts behind that the index does not know of.
      const evicted = await commands.anomalyIndex(`${opts.prefix}anomaly-keys`, input.nowMs, key, opts.maxKeys, ttl);
      // One DEL per evicted key: its structures share a hash slot (Redis Cluster), the keys of others may not.
      await Promise.all(evicted.map((k) => redis.del(`${base(k)}:buckets`, `${base(k)}:minutes`, `${base(k)}:sessions`)));
      const minuteCounts = new Map<number, number>();
      for (let i = 1; i + 1 < out.length; i += 2) minuteCounts.set(Number(out[i]), Number(out[i + 1]));
      return { windowCount: Number(out[0]), minuteCounts };
    },
    async recentSessions(key: string, nowMs: number, windowSeconds: number) {
      return redis.zrevrangebyscore(`${base(key)}:sessions`, '+inf', `(${nowMs - windowSeconds * 1000}`, 'LIMIT', 0, MAX_TRACKED_SESSIONS);
    },
    async tryOpenAlertGate(key: string, nowMs: number, cooldownMs: number) {
      const opened = await commands.anomalyGate(`${base(key)}:gate`, nowMs, cooldownMs, Math.max(cooldownMs, GATE_RETENTION_MS));
      return Number(opened) === 1;
    },
    async close() {
      if (redis.status === 'wait' || redis.status === 'end') {
        redis.disconnect();
        return;
      }
      await redis.quit().catch(() => undefined);
      redis.disconnect();
    },
  };
}
