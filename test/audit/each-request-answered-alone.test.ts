// Each request is answered alone, whatever it is appended with: requests of one organization that wait behind its
// running write (and are appended together, group commit) each get their own counts as if they had run one after
// another, fail alone on their own input, and are streamed once, in seq order.
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db/db.js';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, type RunningApp, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse, strictlyIncreasing } from '../helpers/sse.js';
import { postJson, storedEvents } from '../ingest/ingest-kit.js';

const T0 = Date.now();

/** A CloudWatch spec body whose entries are tool calls with the given event ids (ids are the dedupe keys); the same ids give the same body. */
function body(ids: string[], sessionId: string | null = null) {
  return {
    logGroup: '/aws/lambda/gateway',
    logStream: 'stream-1',
    events: ids.map((id) => ({ id, timestamp: T0 + Number(id), message: JSON.stringify({ toolName: 'search', serverId: 'srv-1', action: 'allowed', latencyMs: 5, ...(sessionId ? { sessionId } : {}) }) })),
  };
}

/** A metric's value from /metrics. */
async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/**
 * Holds the next write transaction of the app before it begins (no connection taken, so the embedded database keeps
 * answering other queries) until release() is called.
 */
function holdNextTransaction(db: Db): { held: Promise<void>; release(): void } {
  const real = db.transaction.bind(db);
  let release!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const held = new Promise<void>((r) => (entered = r));
  let first = true;
  db.transaction = (async (fn: Parameters<Db['transaction']>[0], opts?: Parameters<Db['transaction']>[1]) => {
    if (first) {
      first = false;
      db.transaction = real;
      entered();
      await gate;
    }
    return real(fn, opts);
  }) as Db['transaction'];
  return { held, release };
}

/** Waits until the org has `n` writes in the app's queue (running and waiting), so arrival order is known. */
async function queued(app: RunningApp, org: TestOrg, n: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (app.ctx.eventLog.queuedWrites(org.id) < n) {
    if (Date.now() > deadline) throw new Error(`only ${app.ctx.eventLog.queuedWrites(org.id)} writes queued, waiting for ${n}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function event(key: string, extra: Partial<NewAuditEvent> = {}): NewAuditEvent {
  return { type: 'tool_call', source: 'raw', occurredAt: new Date(), serverId: 'srv-1', toolName: 'direct', action: 'allow', latencyMs: 1, metadata: {}, dedupeKey: key, ...extra };
}

describe.each(backendNames)('each request answered alone (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000' });

  it('stores the requests waiting behind the running write in one transaction, each with its own answer, streamed once in order', async () => {
    const org = await createOrg(app.url);
    const stream = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const transactions0 = await metric(app.url, 'audit_stream_write_transactions_total');
    const grouped0 = await metric(app.url, 'audit_stream_grouped_writes_total');

    const hold = holdNextTransaction(app.ctx.db);
    const first = postJson(app.url, 'cloudwatch', org.key, body(['1', '2']));
    await hold.held;
    // Sent one at a time, each once the one before waits in the queue: arrival order is the order below.
    const sends: [string, () => Promise<{ status: number; body: unknown }>][] = [
      ['a: new session s1', () => postJson(app.url, 'cloudwatch', org.key, body(['10', '11', '12'], 's1'))],
      ['b: 12 repeats a request of the group', () => postJson(app.url, 'cloudwatch', org.key, body(['12', '13'], 's1'))],
      ['c: key K', () => postJson(app.url, 'cloudwatch', org.key, body(['20', '21', '1']), { 'idempotency-key': 'K' })],
      ['d: retry of c', () => postJson(app.url, 'cloudwatch', org.key, body(['20', '21', '1']), { 'idempotency-key': 'K' })],
      ['e: key K, another body', () => postJson(app.url, 'cloudwatch', org.key, body(['30']), { 'idempotency-key': 'K' })],
      ['f: after the refused one', () => postJson(app.url, 'cloudwatch', org.key, body(['40', '41'], 's2'))],
    ];
    const answers: Promise<{ status: number; body: unknown }>[] = [];
    for (const [i, [, send]] of sends.entries()) {
      answers.push(send());
      await queued(app, org, i + 2);
    }
    hold.release();
    expect((await first).body).toEqual({ accepted: 2, duplicates: 0 });
    const got = await Promise.all(answers);
    expect(got.map((r) => r.status)).toEqual([200, 200, 200, 200, 422, 200]);
    expect(got.filter((r) => r.status === 200).map((r) => r.body)).toEqual([
      { accepted: 3, duplicates: 0 },
      { accepted: 1, duplicates: 1 },
      { accepted: 2, duplicates: 1 },
      { accepted: 2, duplicates: 1 },
      { accepted: 2, duplicates: 0 },
    ]);
    expect((got[4].body as { code: string }).code).toBe('idempotency_key_reused');

    // The held write, then the six others in one transaction.
    expect((await metric(app.url, 'audit_stream_write_transactions_total')) - transactions0).toBe(2);
    expect((await metric(app.url, 'audit_stream_grouped_writes_total')) - grouped0).toBe(6);

    // Stored in arrival order with gapless seqs; each session created once, just before its first call.
    const stored = await storedEvents(app.url, org.key);
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    const order = stored.map((e) => (e.type === 'session_update' ? `created:${e.sessionId}` : e.metadata.cloudwatch.eventId));
    expect(order).toEqual(['1', '2', 'created:s1', '10', '11', '12', '13', '20', '21', 'created:s2', '40', '41']);
    const sessions = await http(`${app.url}/api/v1/sessions/s1`, { headers: bearer(org.key) });
    expect(sessions.body).toMatchObject({ sessionId: 's1', toolCallCount: 4, status: 'active' });

    // Every streamed event once, in seq order.
    await stream.waitForCount(stored.length);
    const ids = stream.events.map((e) => Number(e.id));
    expect(strictlyIncreasing(ids)).toBe(true);
    expect(ids).toEqual(stored.map((e) => e.seq));
    stream.close();
  });

  it('fails a request alone when its own events cannot be stored; the others of its group are stored', async () => {
    const org = await createOrg(app.url);
    const hold = holdNextTransaction(app.ctx.db);
    const first = app.ctx.eventLog.append(org.id, [event('k-0')]);
    await hold.held;
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 80; i++) deep = { deep };
    const writes = [
      app.ctx.eventLog.append(org.id, [event('k-1'), event('k-2')]),
      // Refused before it waits for its turn (metadata nesting deeper than storable takes).
      app.ctx.eventLog.append(org.id, [event('k-3', { metadata: deep })]),
      app.ctx.eventLog.append(org.id, [event('k-2'), event('k-4')]),
      // Refused before it waits as well (a latency beyond 32 bits); a failure inside the transaction: whole-or-nothing.test.ts.
      app.ctx.eventLog.append(org.id, [event('k-5'), event('k-6', { latencyMs: 2 ** 40 })]),
      app.ctx.eventLog.append(org.id, [event('k-5'), event('k-7')]),
    ];
    // Rejections are read below, once the group has run.
    for (const w of writes) w.catch(() => undefined);
    await queued(app, org, 4); // the held write and the three that were not refused before waiting
    hold.release();
    await first;
    const settled = await Promise.allSettled(writes);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    const counts = settled.map((s) => (s.status === 'fulfilled' ? [s.value.accepted, s.value.duplicates] : null));
    expect(counts).toEqual([[2, 0], null, [1, 1], null, [2, 0]]);
    const stored = await storedEvents(app.url, org.key);
    expect(stored.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(stored.map((e) => e.latencyMs)).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('answers 503 to every request of a group when storage is unavailable, and stores their retries', async () => {
    const org = await createOrg(app.url);
    const hold = holdNextTransaction(app.ctx.db);
    const first = postJson(app.url, 'cloudwatch', org.key, body(['1']));
    await hold.held;
    const answers = [postJson(app.url, 'cloudwatch', org.key, body(['2']))];
    await queued(app, org, 2);
    answers.push(postJson(app.url, 'cloudwatch', org.key, body(['3'])));
    await queued(app, org, 3);
    // The group's transaction finds the database gone.
    const real = app.ctx.db.transaction.bind(app.ctx.db);
    let failures = 0;
    app.ctx.db.transaction = (async () => {
      failures++;
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
    }) as Db['transaction'];
    hold.release();
    const got = await Promise.all([first, ...answers]);
    app.ctx.db.transaction = real;
    // The held write had begun; the two waiting behind it were one group, tried once: no member was tried alone after the outage.
    expect(got.map((r) => r.status)).toEqual([200, 503, 503]);
    expect(failures).toBe(1);
    const retries = await Promise.all([body(['2']), body(['3'])].map((b) => postJson(app.url, 'cloudwatch', org.key, b)));
    expect(retries.map((r) => r.body)).toEqual([{ accepted: 1, duplicates: 0 }, { accepted: 1, duplicates: 0 }]);
    expect((await storedEvents(app.url, org.key)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });
});
