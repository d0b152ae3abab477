// DATABASE_READ_URL against a real streaming replica (pg_basebackup -R): reads go there within the lag bound; a paused
// (lagging) replica never makes a stream skip or repeat an event, nor a listing skip one; past the bound reads leave it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createOrg, http, postEvents, startApp, toolCall, type RunningApp, type TestOrg } from '../helpers/app.js';
import { realBackendAvailable } from '../helpers/backends.js';
import { PG_BIN, startPrimaryWithReplica, type PrimaryWithReplica } from '../helpers/private-postgres.js';
import { openSse, seqs } from '../helpers/sse.js';

async function metric(url: string, line: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const found = text.split('\n').find((l) => l.startsWith(line));
  return found ? Number(found.slice(line.length).trim()) : NaN;
}

async function ingest(app: RunningApp, org: TestOrg, n: number): Promise<void> {
  for (let i = 0; i < n; i += 100) {
    const r = await postEvents(app.url, org.key, Array.from({ length: Math.min(100, n - i) }, (_, j) => toolCall(i + j, { sessionId: null })));
    expect(r.status).toBe(200);
  }
}

/** Every page of the listing in `order`, following nextCursor (the first from `cursor`). */
async function listAll(app: RunningApp, org: TestOrg, order: 'asc' | 'desc', limit: number, cursor?: number): Promise<number[]> {
  const got: number[] = [];
  let next: string | null = cursor === undefined ? null : String(cursor);
  do {
    const r = await http(`${app.url}/api/v1/audit-events?order=${order}&limit=${limit}${next ? `&cursor=${next}` : ''}`, { headers: bearer(org.key) });
    expect(r.status).toBe(200);
    got.push(...r.body.items.map((e: { seq: number }) => e.seq));
    next = r.body.nextCursor;
  } while (next !== null);
  return got;
}

const range = (from: number, to: number) => Array.from({ length: Math.abs(to - from) + 1 }, (_, i) => (from <= to ? from + i : from - i));

describe.runIf(realBackendAvailable && PG_BIN !== null)('reads from a streaming replica (DATABASE_READ_URL)', () => {
  let pgs: PrimaryWithReplica;
  const apps: RunningApp[] = [];

  beforeAll(async () => {
    pgs = await startPrimaryWithReplica();
  }, 120_000);
  afterAll(async () => {
    for (const a of apps) await a.close();
    await pgs?.stop();
  });

  async function app(env: Record<string, string>): Promise<RunningApp> {
    const a = await startApp({
      DATABASE_URL: pgs.primaryUrl,
      DATABASE_READ_URL: pgs.replicaUrl,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      REDIS_PREFIX: `as-replica-${randomBytes(6).toString('hex')}:`,
      ANOMALY_MIN_RATE: '1000000000',
      ...env,
    });
    apps.push(a);
    return a;
  }

  it('a paused replica serves the reads within its bound; streams, listings and exports neither skip nor repeat an event', async () => {
    // A bound long enough that the paused replica stays in use for the whole test: what is checked is the rule, not the switch.
    const a = await app({ DATABASE_READ_MAX_LAG_MS: '600000', DATABASE_READ_LAG_CHECK_MS: '50' });
    const org = await createOrg(a.url);
    await ingest(a, org, 300);
    await pgs.caughtUp();
    await pgs.pauseReplay();
    try {
      await ingest(a, org, 200); // seqs 301..500: on the primary only

      // The newest page is the replica's (it lags): proof the read went there.
      const before = await metric(a.url, 'audit_stream_replica_reads_total{to="replica"}');
      const first = await http(`${a.url}/api/v1/audit-events?limit=50`, { headers: bearer(org.key) });
      expect(first.body.items[0].seq).toBe(300);
      expect(await metric(a.url, 'audit_stream_replica_reads_total{to="replica"}')).toBeGreaterThan(before);

      // Newest first after a cursor the replica has not reached: the primary answers, nothing between is skipped.
      expect(await listAll(a, org, 'desc', 70, 451)).toEqual(range(450, 1));
      // Oldest first to the end: the pages the replica cannot finish come from the primary.
      expect(await listAll(a, org, 'asc', 120)).toEqual(range(1, 500));

      // A stream resuming from 0: 1..300 replayed from the replica, 301..500 from the primary, then live.
      const sse = await openSse(`${a.url}/api/v1/events?types=tool_call`, { ...bearer(org.key), 'last-event-id': '0' });
      expect(sse.status).toBe(200);
      await sse.waitForCount(500, 30_000);
      await ingest(a, org, 10);
      await sse.waitForCount(510, 30_000);
      expect(seqs(sse)).toEqual(range(1, 510));
      sse.close();

      // An export stays on the database it started on: exactly the events committed there, once, in order.
      const exp = await fetch(`${a.url}/api/v1/audit-events/export`, { headers: bearer(org.key) });
      expect(exp.status).toBe(200);
      const exported = (await exp.text()).trim().split('\n').map((l) => (JSON.parse(l) as { seq: number }).seq);
      expect(exported).toEqual(range(1, 300));
    } finally {
      await pgs.resumeReplay();
    }
    await pgs.caughtUp();
    const caught = await http(`${a.url}/api/v1/audit-events?limit=1`, { headers: bearer(org.key) });
    expect(caught.body.items[0].seq).toBe(510);
  }, 120_000);

  it('past DATABASE_READ_MAX_LAG_MS a paused replica is left: reads see the newest events on the primary', async () => {
    const a = await app({ DATABASE_READ_MAX_LAG_MS: '300', DATABASE_READ_LAG_CHECK_MS: '50' });
    const org = await createOrg(a.url);
    await ingest(a, org, 100);
    await pgs.caughtUp();
    await pgs.pauseReplay();
    try {
      await ingest(a, org, 100);
      // The measured bound grows while the replica stays behind, until reads leave it.
      const deadline = Date.now() + 30_000;
      while ((await metric(a.url, 'audit_stream_replica_lag_seconds')) <= 0.3) {
        expect(Date.now()).toBeLessThan(deadline);
        await new Promise((r) => setTimeout(r, 50));
      }
      const toPrimary = await metric(a.url, 'audit_stream_replica_reads_total{to="primary"}');
      const page = await http(`${a.url}/api/v1/audit-events?limit=10`, { headers: bearer(org.key) });
      expect(page.body.items[0].seq).toBe(200);
      const count = await http(`${a.url}/api/v1/audit-events/count`, { headers: bearer(org.key) });
      expect(count.body.count).toBe(200);
      expect(await metric(a.url, 'audit_stream_replica_reads_total{to="primary"}')).toBeGreaterThan(toPrimary);
    } finally {
      await pgs.resumeReplay();
    }
  }, 120_000);

  it('refuses DATABASE_READ_URL without DATABASE_URL', async () => {
    await expect(startApp({ DATABASE_URL: '', DATABASE_READ_URL: pgs.replicaUrl })).rejects.toThrow(/DATABASE_READ_URL: needs DATABASE_URL/);
  });
});
