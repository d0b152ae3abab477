// A proxied call's intent is written while its organization's append is in flight, not after it: the intent takes no
// lock on the organization's row (no foreign key), while appends of the org still go one at a time; the sweep drops
// intents of an organization since deleted and records the others.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockOrgSeq } from '../../src/audit/event-log/log-sql.js';
import type { Db } from '../../src/db/db.js';
import { migrate } from '../../src/db/migrate.js';
import { createPgDb } from '../../src/db/pg-db.js';
import type { CallFacts } from '../../src/proxy/call-record.js';
import { writeIntentsUnlessSuspended } from '../../src/proxy/call-intents-repo.js';
import { createCallRecorder } from '../../src/proxy/call-recorder.js';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import pino from 'pino';
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

  it("an intent is stored while another transaction holds its organization's row FOR UPDATE (no foreign key lock)", async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      await c.query('BEGIN');
      await c.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [orgId]);
      const callId = randomUUID();
      const facts = { callId, sessionId: 's-2', startedAt: new Date().toISOString() } as unknown as CallFacts;
      const written = await db.transaction(async (tx) => {
        await tx.query("SET LOCAL lock_timeout = '2s'");
        return writeIntentsUnlessSuspended(tx, [{ orgId, facts, sweepAfterMs: 60_000 }]);
      });
      expect([...written]).toEqual([callId]);
    } finally {
      await c.query('ROLLBACK');
      await c.end();
    }
  });

  it("the sweep drops intents of a deleted organization and records the others' calls as unknown", async () => {
    const gone = (await db.query<{ id: string }>("INSERT INTO organizations (name) VALUES ('gone') RETURNING id")).rows[0].id;
    const mine = randomUUID();
    const orphan = randomUUID();
    const facts = (callId: string) => ({ callId, serverId: 'srv', sessionId: 's-3', sessionSource: 'meta', toolName: 't', jsonrpcId: 1, protocolVersion: null, era: 'modern', key: { id: 'k', name: 'k' }, client: { name: '', version: '', userAgent: '' }, action: 'allow', rule: null, reason: null, ruleErrors: [], argumentsBytes: 2, arguments: { kind: 'json', value: {} }, startedAt: new Date().toISOString() }) as CallFacts;
    await writeIntentsUnlessSuspended(db, [
      { orgId: gone, facts: facts(orphan), sweepAfterMs: 0 },
      { orgId, facts: facts(mine), sweepAfterMs: 0 },
    ]);
    await db.query('DELETE FROM organizations WHERE id = $1', [gone]);
    await db.query("UPDATE proxy_call_intents SET sweep_after = now() - interval '1 second' WHERE call_id = ANY($1::uuid[])", [[mine, orphan]]);
    const appended: { orgId: string; events: NewAuditEvent[] }[] = [];
    const recorder = createCallRecorder({ db, append: async (o, events) => void appended.push({ orgId: o, events }), logger: pino({ level: 'silent' }), maxPending: 10, sweepIntervalMs: 60_000 });
    try {
      await recorder.sweepOnce();
    } finally {
      await recorder.close();
    }
    expect(appended.map((a) => [a.orgId, a.events.map((e) => (e.metadata as { proxy: { callId: string; outcome: string } }).proxy)])).toEqual([[orgId, [expect.objectContaining({ callId: mine, outcome: 'unknown' })]]]);
    const left = await db.query('SELECT call_id FROM proxy_call_intents WHERE call_id = ANY($1::uuid[])', [[mine, orphan]]);
    expect(left.rows).toEqual([]);
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
