// A proxied call's intent is written while its organization's append is in flight, not after it: the append's counter
// lock (FOR NO KEY UPDATE) does not hold the intent's foreign key check, while appends of the org still go one at a time.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockOrgSeq } from '../../src/audit/event-log/log-sql.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDb } from '../../src/db/pg-db.js';
import type { CallFacts } from '../../src/proxy/call-record.js';
import { writeIntentsUnlessSuspended } from '../../src/proxy/call-intents-repo.js';
import { createTestDatabase, realBackendAvailable } from '../helpers/backends.js';

describe.runIf(realBackendAvailable)("intents beside the organization's append (Postgres)", () => {
  let db: Db;
  let url: string;
  let drop: () => Promise<void>;
  let orgId: string;

  beforeAll(async () => {
    const t = await createTestDatabase();
    url = t.url;
    drop = t.drop;
    db = createPgDb({ connectionString: url, max: 4 });
    await migrate(db);
    orgId = (await db.query<{ id: string }>("INSERT INTO organizations (name) VALUES ('intents') RETURNING id")).rows[0].id;
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  /** A session that holds the org's counter lock as an append does, until released. */
  async function holdAppendLock(): Promise<{ release: () => Promise<void> }> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query('BEGIN');
    await lockOrgSeq(c, orgId);
    return {
      async release() {
        await c.query('COMMIT');
        await c.end();
      },
    };
  }

  it('an intent is stored while an append of its organization holds the counter lock', async () => {
    const append = await holdAppendLock();
    try {
      const callId = randomUUID();
      const facts = { callId, sessionId: 's-1', startedAt: new Date().toISOString() } as unknown as CallFacts;
      // lock_timeout is the failure path: with the old FOR UPDATE lock the insert waited for the append to end.
      const written = await db.transaction(async (tx) => {
        await tx.query("SET LOCAL lock_timeout = '5s'");
        return writeIntentsUnlessSuspended(tx, [{ orgId, facts, sweepAfterMs: 60_000 }]);
      });
      expect([...written]).toEqual([callId]);
    } finally {
      await append.release();
    }
  });

  it('a second append of the organization still waits for the first (the seq order holds)', async () => {
    const first = await holdAppendLock();
    try {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query('BEGIN');
        await c.query("SET LOCAL lock_timeout = '200ms'");
        await expect(lockOrgSeq(c, orgId)).rejects.toMatchObject({ code: '55P03' });
        await c.query('ROLLBACK');
      } finally {
        await c.end();
      }
    } finally {
      await first.release();
    }
  });
});
