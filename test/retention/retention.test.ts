// Retention on both backends: exactly the expired seq prefix goes (kept seqs stay gapless), then the sessions and servers
// no event names; per-organization periods through the admin API; a stream resuming from a removed seq gets `reset` and
// continues; dedupe stays exact for kept events; one instance at a time runs the job, and a lost lease deletes nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { ADMIN_TOKEN, bearer, createOrg, http, postEvents, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';
import { deleteSeqRange } from '../../src/retention/retention-repo.js';
import { createJobLease } from '../../src/retention/job-lease.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe.each(backendNames)('retention (%s)', (backendName) => {
  // The timer never fires during the test; passes run through runOnce. Batches of 7 rows: several per organization.
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', AUDIT_RETENTION_DAYS: '30', RETENTION_INTERVAL_MS: '86400000', RETENTION_BATCH_ROWS: '7' });
  let org: TestOrg;
  let forever: TestOrg;
  let short: TestOrg;

  // 40 tool calls per org (and a session_update before the first call of each session): everything up to call r-25
  // stored `ageDays` ago, the rest now, except r-30 also stored then (an expired event after kept ones: it stays until
  // everything before it expires, so what is kept has no hole). Returns the first seq that must be kept.
  async function fill(o: TestOrg, ageDays: number): Promise<number> {
    const events = Array.from({ length: 40 }, (_, i) => {
      const seq = i + 1;
      const session = seq <= 25 ? 's-old' : seq <= 35 ? 's-new' : 's-mixed';
      return toolCall(seq, { id: `r-${seq}`, sessionId: seq === 2 ? 's-mixed' : session, serverId: seq <= 25 ? 'srv-old' : 'srv-new', toolName: 'tool' });
    });
    expect((await postEvents(app.url, o.key, events)).body).toEqual({ accepted: 40, duplicates: 0 });
    const seqOf = async (id: string) => Number((await app.ctx.db.query<{ seq: number }>(`SELECT seq FROM audit_events WHERE org_id = $1 AND metadata->>'id' = $2`, [o.id, id])).rows[0].seq);
    const last = await seqOf('r-25');
    await app.ctx.db.query(`UPDATE audit_events SET received_at = now() - $2 * interval '1 day' WHERE org_id = $1 AND (seq <= $3 OR seq = $4)`, [o.id, ageDays, last, await seqOf('r-30')]);
    return last + 1;
  }
  let keptFrom: number;
  let total: number;

  const seqsOf = async (o: TestOrg) => (await app.ctx.db.query<{ seq: number }>('SELECT seq FROM audit_events WHERE org_id = $1 ORDER BY seq', [o.id])).rows.map((r) => Number(r.seq));
  const namesOf = async (table: 'agent_sessions' | 'servers', col: string, o: TestOrg) =>
    (await app.ctx.db.query<{ n: string }>(`SELECT ${col} AS n FROM ${table} WHERE org_id = $1 ORDER BY 1`, [o.id])).rows.map((r) => r.n);

  beforeAll(async () => {
    org = await createOrg(app.url);
    forever = await createOrg(app.url);
    short = await createOrg(app.url);
    keptFrom = await fill(org, 40);
    await fill(forever, 40);
    expect(await fill(short, 12)).toBe(keptFrom);
    total = (await seqsOf(org)).length;
    // s-old and s-mixed begin before r-3, s-new after r-25: 43 events, the first 27 expired.
    expect({ keptFrom, total }).toEqual({ keptFrom: 28, total: 43 });
  });

  const retentionUrl = (o: { id: string }) => `${app.url}/api/v1/admin/organizations/${o.id}/retention`;

  it('sets, reads and clears an organization\'s period through the admin API, within bounds', async () => {
    expect((await http(retentionUrl(org), { headers: admin })).body).toEqual({ orgId: org.id, effectiveDays: 30, source: 'default' });
    expect((await http(retentionUrl(forever), { method: 'PUT', headers: admin, json: { days: null } })).body).toEqual({ orgId: forever.id, days: null, effectiveDays: null, source: 'organization' });
    expect((await http(retentionUrl(short), { method: 'PUT', headers: admin, json: { days: 10 } })).body).toMatchObject({ days: 10, effectiveDays: 10 });
    expect((await http(retentionUrl(short), { headers: admin })).body).toMatchObject({ days: 10, source: 'organization' });
    for (const body of [{ days: 0 }, { days: 36_501 }, { days: 1.5 }, { days: '7' }, {}]) {
      const r = await http(retentionUrl(short), { method: 'PUT', headers: admin, json: body });
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
      expect(r.body.issues.map((i: { path: string }) => i.path)).toEqual(['days']);
    }
    expect((await http(retentionUrl({ id: '00000000-0000-4000-8000-000000000000' }), { method: 'PUT', headers: admin, json: { days: 3 } })).status).toBe(404);
    expect((await http(retentionUrl(org), { method: 'PUT', json: { days: 3 } })).status).toBe(401);
    expect((await http(retentionUrl(org), { method: 'PUT', headers: bearer(org.key), json: { days: 3 } })).status).toBe(401);
    const cleared = await http(retentionUrl(org), { method: 'PUT', headers: admin, json: { days: 5 } });
    expect(cleared.body.days).toBe(5);
    expect((await http(retentionUrl(org), { method: 'DELETE', headers: admin })).body).toEqual({ orgId: org.id, effectiveDays: 30, source: 'default' });
  });

  it('removes exactly the expired prefix of each organization, then sessions and servers left without events', async () => {
    const pass = await app.ctx.retention.runOnce();
    expect(pass).not.toBeNull();
    const byOrg = new Map(pass!.orgs.map((o) => [o.orgId, o]));
    expect(byOrg.get(org.id)).toMatchObject({ days: 30, removedEvents: keptFrom - 1, keptFromSeq: keptFrom, removedSessions: 1, removedServers: 1 });
    expect(byOrg.get(short.id)).toMatchObject({ days: 10, removedEvents: keptFrom - 1, keptFromSeq: keptFrom });
    expect(byOrg.has(forever.id)).toBe(false);
    const kept = Array.from({ length: total - keptFrom + 1 }, (_, i) => keptFrom + i);
    expect(await seqsOf(org)).toEqual(kept);
    expect(await seqsOf(short)).toEqual(kept);
    expect(await seqsOf(forever)).toHaveLength(total);
    // s-old had only removed events; s-mixed had removed ones and r-36..r-40 (kept); srv-old only removed ones.
    expect(await namesOf('agent_sessions', 'session_id', org)).toEqual(['s-mixed', 's-new']);
    expect(await namesOf('servers', 'server_id', org)).toEqual(['srv-new']);
    expect(await namesOf('agent_sessions', 'session_id', forever)).toEqual(['s-mixed', 's-new', 's-old']);
    // The hour map forgets only hours with nothing kept; listings by time still answer exactly.
    const hours = await app.ctx.db.query<{ min_seq: number }>('SELECT min_seq FROM audit_event_hours WHERE org_id = $1', [org.id]);
    expect(hours.rows.length).toBeGreaterThan(0);
    const listed = await http(`${app.url}/api/v1/audit-events?order=asc&limit=1000&from=2000-01-01T00:00:00Z`, { headers: bearer(org.key) });
    expect(listed.body.items.map((e: { seq: number }) => e.seq)).toEqual(kept);
    // A second pass finds nothing more to remove (r-30 is expired but after kept events, so it stays).
    const again = await app.ctx.retention.runOnce();
    expect(again!.orgs.find((o) => o.orgId === org.id)).toMatchObject({ removedEvents: 0, keptFromSeq: keptFrom });
  });

  it('keeps dedupe exact for kept events', async () => {
    const retry = await postEvents(app.url, org.key, [toolCall(35, { id: 'r-35' }), toolCall(30, { id: 'r-30' })]);
    expect(retry.body).toEqual({ accepted: 0, duplicates: 2 });
  });

  it('resets a stream resuming from a removed seq and continues with the oldest kept event', async () => {
    const c = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': '3' });
    try {
      expect(c.status).toBe(200);
      const n = total - keptFrom + 1;
      await c.waitForCount(n);
      expect(c.comments.filter((t) => t.startsWith('reset:'))).toEqual([`reset: events 4..${keptFrom - 1} are no longer kept (retention). Continuing from ${keptFrom}`]);
      expect(c.events.map((e) => Number(e.id))).toEqual(Array.from({ length: n }, (_, i) => keptFrom + i));
      await postEvents(app.url, org.key, [toolCall(41, { id: 'r-41' })]);
      await c.waitForCount(n + 1);
      expect(c.lastEventId()).toBe(String(total + 1));
    } finally {
      c.close();
    }
    // An id inside what is kept resumes without a reset.
    const d = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': String(total - 2) });
    try {
      await d.waitForCount(3);
      expect(d.events.map((e) => Number(e.id))).toEqual([total - 1, total, total + 1]);
      expect(d.comments.some((t) => t.startsWith('reset:'))).toBe(false);
    } finally {
      d.close();
    }
  });

  it('removes Idempotency-Key outcomes recorded before the period with the events, and keeps newer ones answering', async () => {
    const keyed = (key: string, id: string) =>
      http(`${app.url}/api/v1/ingest/events`, { method: 'POST', headers: { ...bearer(short.key), 'idempotency-key': key }, json: [{ id, serverId: 'srv-k', toolName: 'keyed' }] });
    expect((await keyed('key-old', 'k-old')).body).toEqual({ accepted: 1, duplicates: 0 });
    expect((await keyed('key-new', 'k-new')).body).toEqual({ accepted: 1, duplicates: 0 });
    const keys = async () => (await app.ctx.db.query<{ k: string }>('SELECT idempotency_key AS k FROM ingest_requests WHERE org_id = $1 ORDER BY 1', [short.id])).rows.map((r) => r.k);
    expect(await keys()).toEqual(['key-new', 'key-old']);
    await app.ctx.db.query(`UPDATE ingest_requests SET created_at = now() - interval '40 days' WHERE org_id = $1 AND idempotency_key = 'key-old'`, [short.id]);

    const pass = await app.ctx.retention.runOnce();
    expect(pass!.orgs.find((o) => o.orgId === short.id)).toMatchObject({ removedIdempotencyKeys: 1 });
    expect(await keys()).toEqual(['key-new']);
    // The kept key still answers its first counts; the expired one is a new request (its event is a duplicate by id).
    expect((await keyed('key-new', 'k-new')).body).toEqual({ accepted: 1, duplicates: 0 });
    expect((await keyed('key-old', 'k-old')).body).toEqual({ accepted: 0, duplicates: 1 });
  });

  it('does not run while another instance holds the job, and a holder that lost its lease deletes nothing', async () => {
    const other = createJobLease(app.ctx.db, 'retention', 'another-instance', 60_000);
    expect(await other.acquire()).toBe(true);
    await app.ctx.db.query(`UPDATE audit_events SET received_at = now() - interval '40 days' WHERE org_id = $1`, [org.id]);
    expect(await app.ctx.retention.runOnce()).toBeNull();
    const stored = (await seqsOf(org)).length;
    expect(stored).toBe(total + 1 - keptFrom + 1);
    // This holder's lease is not valid: its delete statement removes nothing, whatever it asks.
    const stale = createJobLease(app.ctx.db, 'retention', 'stale-holder', 60_000);
    const d = await deleteSeqRange(app.ctx.db, org.id, 0, 1_000, { sql: stale.heldSql('$4', '$5'), params: ['retention', 'stale-holder'] });
    expect(d.removed).toBe(0);
    await other.release();
    // Everything is expired now: s-mixed and s-new go, and srv-new and srv-1 (the server of the call sent above).
    const pass = await app.ctx.retention.runOnce();
    expect(pass!.orgs.find((o) => o.orgId === org.id)).toMatchObject({ removedEvents: stored, keptFromSeq: null, removedSessions: 2, removedServers: 2 });
    expect(await seqsOf(org)).toEqual([]);
    // Nothing kept: a resuming client is told, and continues live from the next event.
    const c = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': '10' });
    try {
      await c.waitFor((x) => x.comments.some((t) => t.startsWith('reset:')), 10_000, 'reset');
      expect(c.comments.find((t) => t.startsWith('reset:'))).toBe(`reset: events 11..${total + 1} are no longer kept (retention). Continuing from ${total + 2}`);
      await postEvents(app.url, org.key, [toolCall(42, { id: 'r-42' })]);
      await c.waitForCount(1);
      expect(c.events.map((e) => Number(e.id))).toEqual([total + 2]);
    } finally {
      c.close();
    }
  });
});
