// Re-validation of open streams' credentials, on its own with a real database and bus: a periodic check ends streams
// of revoked keys and ended logins; revocation broadcasts end them at once, and so does a re-subscribed control channel
// (on a private Redis when TEST_REDIS_URL is set) for a revocation it missed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthRepo, type AuthRepo } from '../../src/auth/auth-repo.js';
import { watchStreamCredentials, type StreamCredentials } from '../../src/auth/stream-credentials.js';
import { createBus, type Bus } from '../../src/bus/create-bus.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgliteDb } from '../../src/db/pglite-db.js';
import { startPrivateRedis } from '../helpers/private-redis.js';

const logger = pino({ level: 'silent' });

describe('watchStreamCredentials', () => {
  let dir: string;
  let db: Db;
  let repo: AuthRepo;
  let bus: Bus;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'audit-stream-creds-'));
    db = await createPgliteDb(dir);
    await migrate(db);
    repo = createAuthRepo(db);
    bus = createBus({ REDIS_CLUSTER_NODES: [], REDIS_PREFIX: '' }, logger);
  });
  afterAll(async () => {
    await bus?.close();
    await db?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Open streams as a list; end() removes the ones it selects and records why. */
  function holders(open: StreamCredentials[]) {
    const ended: { c: StreamCredentials; why: string }[] = [];
    return {
      ended,
      open,
      credentials: () => open,
      end(bad: (c: StreamCredentials) => boolean, why: string) {
        for (const c of [...open]) if (bad(c)) {
          open.splice(open.indexOf(c), 1);
          ended.push({ c, why });
        }
      },
    };
  }

  it('ends the streams of a revoked key and of an ended login on the next check, and only those', async () => {
    const org = await repo.createOrg('creds');
    const kept = await repo.createApiKey(org.id, 'kept', 'ask_kept', 'hash-kept', ['events:read']);
    const revoked = await repo.createApiKey(org.id, 'revoked', 'ask_gone', 'hash-gone', ['events:read']);
    const user = await repo.createUser('creds@example.com', 'x');
    await repo.createLoginSession('token-hash', user.id, org.id, new Date(Date.now() + 3_600_000));
    const login = (await repo.findLoginSession('token-hash'))!;
    const h = holders([
      { keyId: kept.id, loginSessionId: null },
      { keyId: revoked.id, loginSessionId: null },
      { keyId: null, loginSessionId: login.id },
    ]);
    const watch = watchStreamCredentials({ authRepo: repo, control: bus.control, logger, recheckMs: 3_600_000 }, h);
    await watch.recheck();
    expect(h.ended).toEqual([]);

    await repo.revokeApiKey(revoked.id);
    await repo.deleteLoginSession(login.id);
    await watch.recheck();
    watch.stop();
    expect(h.ended).toEqual([
      { c: { keyId: revoked.id, loginSessionId: null }, why: 'credentials revoked or expired' },
      { c: { keyId: null, loginSessionId: login.id }, why: 'credentials revoked or expired' },
    ]);
    expect(h.open).toEqual([{ keyId: kept.id, loginSessionId: null }]);
  });

  it('ends streams at once on a revocation broadcast, until stopped', async () => {
    const h = holders([
      { keyId: 'k1', loginSessionId: null },
      { keyId: null, loginSessionId: 'l1' },
      { keyId: 'k2', loginSessionId: null },
    ]);
    const watch = watchStreamCredentials({ authRepo: repo, control: bus.control, logger, recheckMs: 3_600_000 }, h);
    await bus.control.publish({ kind: 'revoke_key', keyId: 'k1' });
    await bus.control.publish({ kind: 'end_login', loginSessionId: 'l1' });
    expect(h.ended.map((e) => e.why)).toEqual(['API key revoked', 'signed out']);
    watch.stop();
    await bus.control.publish({ kind: 'revoke_key', keyId: 'k2' });
    expect(h.open).toEqual([{ keyId: 'k2', loginSessionId: null }]);
  });

  it.runIf(Boolean(process.env.TEST_REDIS_URL))('checks every stream at once when the control channel is back after a loss (a revocation may have been missed)', async () => {
    const redis = await startPrivateRedis();
    const prefix = 'as-test-creds:';
    const redisBus = createBus({ REDIS_URL: redis.url, REDIS_CLUSTER_NODES: [], REDIS_PREFIX: prefix }, logger);
    try {
      await redisBus.connected(5000);
      await redisBus.ping();
      const org = await repo.createOrg('creds-resubscribed');
      const key = await repo.createApiKey(org.id, 'missed', 'ask_missed', 'hash-missed', ['events:read']);
      let ended!: () => void;
      const endedNow = new Promise<void>((r) => (ended = r));
      const h = holders([{ keyId: key.id, loginSessionId: null }]);
      const end = h.end;
      h.end = (bad, why) => {
        end(bad, why);
        if (h.ended.length) ended();
      };
      // The periodic check is an hour away: only the re-subscription can end the stream.
      const watch = watchStreamCredentials({ authRepo: repo, control: redisBus.control, logger, recheckMs: 3_600_000 }, h);
      await repo.revokeApiKey(key.id); // revoked without a broadcast reaching this instance
      expect(await redis.killClients(`${prefix}sub`)).toBe(1);
      await endedNow;
      watch.stop();
      expect(h.ended).toEqual([{ c: { keyId: key.id, loginSessionId: null }, why: 'credentials revoked or expired' }]);
    } finally {
      await redisBus.close();
      await redis.stop();
    }
  });
});
