// The control channel on each backend (in process; Redis when TEST_REDIS_URL is set): every instance's listeners of a
// kind get its messages; anything not a known, well-formed kind is ignored; a lost subscription is signalled once back.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { standaloneChannelNames } from '../../src/bus/channel-names.js';
import { CONTROL_MESSAGE_MAX_BYTES, type ControlMessage } from '../../src/bus/control-messages.js';
import { createBus, type Bus } from '../../src/bus/create-bus.js';
import { startPrivateRedis } from '../helpers/private-redis.js';

const logger = pino({ level: 'silent' });
const redisUrl = process.env.TEST_REDIS_URL;
const kinds = redisUrl ? (['memory', 'redis'] as const) : (['memory'] as const);

/** Collects the messages a bus's listeners get, by kind; `next()` resolves with the next one, `count(n)` once n came. */
function recorder(bus: Bus) {
  const got: ControlMessage[] = [];
  const waiters: ((m: ControlMessage) => void)[] = [];
  const push = (m: ControlMessage) => {
    got.push(m);
    waiters.splice(0).forEach((w) => w(m));
  };
  bus.control.on('revoke_key', push);
  bus.control.on('end_login', push);
  const next = () => new Promise<ControlMessage>((r) => waiters.push(r));
  const count = async (n: number) => {
    while (got.length < n) await next();
  };
  return { got, next, count };
}

describe.each(kinds)('control channel (%s)', (kind) => {
  const prefix = `as-test-${randomBytes(6).toString('hex')}:`;
  const buses: Bus[] = [];
  const open = async () => {
    const bus = createBus({ REDIS_URL: kind === 'redis' ? redisUrl : undefined, REDIS_CLUSTER_NODES: [], REDIS_PREFIX: prefix }, logger);
    buses.push(bus);
    await bus.connected(5000);
    await bus.ping();
    return bus;
  };
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
  });

  it('delivers each kind to the listeners of that kind, on this instance and (with Redis) the others', async () => {
    const a = await open();
    const b = kind === 'redis' ? await open() : a;
    const onA = recorder(a);
    const onB = a === b ? onA : recorder(b);
    let revokes = 0;
    b.control.on('revoke_key', () => revokes++);
    const arrived = onB.next();
    await a.control.publish({ kind: 'revoke_key', keyId: 'key-1' });
    expect(await arrived).toEqual({ kind: 'revoke_key', keyId: 'key-1' });
    const ended = onB.next();
    await a.control.publish({ kind: 'end_login', loginSessionId: 'login-1' });
    expect(await ended).toEqual({ kind: 'end_login', loginSessionId: 'login-1' });
    expect(revokes).toBe(1);
    // The sender's own listeners get them too (through Redis, on its own subscriber connection).
    await onA.count(2);
    expect(onA.got).toEqual(onB.got);
  });

  it.runIf(kind === 'redis')('ignores messages of unknown kinds, malformed or oversized ones, and goes on', async () => {
    const bus = await open();
    const on = recorder(bus);
    const raw = new Redis(redisUrl!);
    const channel = standaloneChannelNames(prefix).control;
    try {
      for (const bad of [
        '{"kind":"invalidate_session_status","sessionId":"s-1"}',
        'not json',
        '{"kind":"revoke_key"}',
        '{"kind":"revoke_key","keyId":42}',
        JSON.stringify({ kind: 'revoke_key', keyId: 'k'.repeat(CONTROL_MESSAGE_MAX_BYTES) }),
      ]) {
        await raw.publish(channel, bad);
      }
      const good = on.next();
      await raw.publish(channel, '{"kind":"revoke_key","keyId":"key-2","extra":"ignored"}');
      // Published after the bad ones on one connection, so delivered after them: they were all seen and dropped.
      expect(await good).toEqual({ kind: 'revoke_key', keyId: 'key-2' });
      expect(on.got).toHaveLength(1);
    } finally {
      raw.disconnect();
    }
  });

  it.runIf(kind === 'redis')('signals onResubscribed once a lost subscriber connection is back, and delivers again', async () => {
    const redis = await startPrivateRedis();
    const ownPrefix = `as-test-${randomBytes(6).toString('hex')}:`;
    const bus = createBus({ REDIS_URL: redis.url, REDIS_CLUSTER_NODES: [], REDIS_PREFIX: ownPrefix }, logger);
    try {
      await bus.connected(5000);
      await bus.ping();
      const on = recorder(bus);
      const resubscribed = new Promise<void>((r) => bus.control.onResubscribed(r));
      await redis.waitForClients(`${ownPrefix}sub`, 1);
      expect(await redis.killClients(`${ownPrefix}sub`)).toBe(1);
      await resubscribed;
      const arrived = on.next();
      await bus.control.publish({ kind: 'end_login', loginSessionId: 'login-2' });
      expect(await arrived).toEqual({ kind: 'end_login', loginSessionId: 'login-2' });
    } finally {
      await bus.close();
      await redis.stop();
    }
  });
});
