// An event's metadata reads back as the source made it, both backends, though a log batch's shared part is stored once
// per organization (migrations 010, 046): listing and export give back exactly that metadata, by one rule for every
// source, and each distinct shared part is one row per organization.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, send, toolCall, type TestOrg } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { fixture, post, postJson, storedEvents } from '../ingest/ingest-kit.js';
import { cloudWatchSource } from '../../src/ingest/cloudwatch/cloudwatch-source.js';
import { firehoseEvents } from '../../src/ingest/firehose/firehose-source.js';
import type { EventsContext } from '../../src/ingest/ingest-source.js';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { ownMetadata } from '../../src/audit/event-log/contexts.js';

const SOURCE_ARN = 'arn:aws:firehose:us-east-1:123456789012:deliverystream/audit-stream';

function eventsContext(headers: Record<string, string> = {}): EventsContext {
  return { idempotencyKey: null, receivedAt: new Date(), contentType: 'application/json', path: '', headers, limits: { bodyBytes: 10_000_000, maxEntries: 10_000 } };
}

/** What the CloudWatch source makes of a body: the metadata each event stored whole before migration 010. */
async function cloudWatchMetadata(body: unknown): Promise<Record<string, unknown>[]> {
  return ((await cloudWatchSource().toEvents(body, eventsContext())).events as NewAuditEvent[]).map((e) => e.metadata ?? {});
}

/** A subscription payload: the fixture's batch with its own stream name and event ids from `firstId`. */
function subscription(stream: string, firstId: number, extra: Record<string, unknown> = {}) {
  const base = JSON.parse(fixture('cloudwatch/subscription-data-message.json').toString('utf8'));
  return {
    ...base,
    ...extra,
    logStream: stream,
    logEvents: base.logEvents.map((e: Record<string, unknown>, i: number) => ({ ...e, id: String(BigInt(firstId) * 1000n + BigInt(i)) })),
  };
}

describe('the own part of an event\'s metadata (ownMetadata)', () => {
  const cw = { logGroup: 'g', logStream: 's', subscriptionFilters: ['f'] };
  const shared = { source_detail: 'g', payloadFormat: 'subscription', cloudwatch: cw };

  it('keeps the keys not shared, and of a shared object the entry\'s own keys, whatever the key is named', () => {
    expect(ownMetadata({ source_detail: 'g', traceId: null, payloadFormat: 'subscription', cloudwatch: cw }, shared)).toEqual({ traceId: null });
    expect(ownMetadata({ source_detail: 'g', payloadFormat: 'subscription', cloudwatch: { ...cw, eventId: '1' } }, shared)).toEqual({ cloudwatch: { eventId: '1' } });
    const resource = { service: 'svc', host: 'h' };
    expect(ownMetadata({ kind: 'span', resource: { ...resource, pid: 7 } }, { resource })).toEqual({ kind: 'span', resource: { pid: 7 } });
    expect(ownMetadata({ kind: 'span', resource }, { resource })).toEqual({ kind: 'span' });
    // A `__proto__` key is kept as a key of its own, not taken as the object's prototype.
    const own = ownMetadata({ ...shared, ...(JSON.parse('{"__proto__": {"x": 1}}') as object) }, shared);
    expect(JSON.stringify(own)).toBe('{"__proto__":{"x":1}}');
  });

  it('is null when the parts would not give the metadata back', () => {
    expect(ownMetadata({ source_detail: 'other', payloadFormat: 'subscription', cloudwatch: cw }, shared)).toBeNull();
    expect(ownMetadata({ source_detail: 'g', payloadFormat: 'subscription', cloudwatch: { ...cw, subscriptionFilters: ['f'] } }, shared)).toBeNull(); // a copy, not the batch's value
    expect(ownMetadata({ source_detail: 'g', payloadFormat: 'subscription' }, shared)).toBeNull();
    expect(ownMetadata({ source_detail: 'g' }, {})).toBeNull();
  });
});

describe.each(backendNames)('metadata read as sent (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000' }, {}, { inject: true });

  /** `expected` as Postgres hands back a stored jsonb (its key order): the text each row's metadata had before. */
  async function asStored(expected: Record<string, unknown>[]): Promise<string[]> {
    const r = await app.ctx.db.query<{ m: unknown }>('SELECT x::jsonb AS m FROM unnest($1::text[]) WITH ORDINALITY AS t(x, n) ORDER BY n', [expected.map((m) => JSON.stringify(m))]);
    return r.rows.map((row) => JSON.stringify(row.m));
  }

  async function exported(org: TestOrg): Promise<Record<string, unknown>[]> {
    const res = await send(`${app.url}/api/v1/audit-events/export`, { headers: bearer(org.key) });
    expect(res.status).toBe(200);
    return (await res.text()).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  async function contextRows(org: TestOrg): Promise<{ events: number; shared: number; contexts: number }> {
    const r = await app.ctx.db.query<{ events: number; shared: number; contexts: number }>(
      `SELECT count(*)::int AS events, count(context_id)::int AS shared, (SELECT count(*)::int FROM audit_contexts WHERE org_id = $1) AS contexts
       FROM audit_events WHERE org_id = $1 AND source <> 'system'`,
      [org.id],
    );
    return r.rows[0];
  }

  /** Listing (newest first and oldest first) and export both give exactly `expected`, in seq order. */
  async function expectMetadata(org: TestOrg, expected: Record<string, unknown>[]): Promise<void> {
    const want = await asStored(expected);
    const asc = (await storedEvents(app.url, org.key)).filter((e) => e.source !== 'system');
    expect(asc.map((e) => JSON.stringify(e.metadata))).toEqual(want);
    const desc = await http(`${app.url}/api/v1/audit-events?limit=1000`, { headers: bearer(org.key) });
    const descItems = (desc.body.items as { source: string; metadata: unknown }[]).filter((e) => e.source !== 'system');
    expect(descItems.map((e) => JSON.stringify(e.metadata)).reverse()).toEqual(want);
    const lines = (await exported(org)).filter((e) => e.source !== 'system');
    expect(lines.map((e) => JSON.stringify(e.metadata))).toEqual(want);
  }

  it('puts any source\'s parts back by the one rule in SQL: own keys over shared ones, objects merged one level down', async () => {
    const read = async (own: unknown, shared: unknown) =>
      JSON.stringify((await app.ctx.db.query<{ m: unknown }>('SELECT audit_event_metadata($1::jsonb, $2::jsonb) AS m', [JSON.stringify(own), shared === null ? null : JSON.stringify(shared)])).rows[0].m);
    const [whole] = await asStored([{ kind: 'span', p: 's', resource: { host: 'h', pid: 7, service: 'svc' } }]);
    expect(await read({ kind: 'span', resource: { pid: 7 } }, { p: 's', resource: { service: 'svc', host: 'h' } })).toBe(whole);
    // A shared object the event has no own keys of is read whole; without a shared part the metadata is the event's own.
    const [cw] = await asStored([{ cloudwatch: { logGroup: 'g' }, source_detail: 'g' }]);
    expect(await read({}, { source_detail: 'g', cloudwatch: { logGroup: 'g' } })).toBe(cw);
    expect(await read({ a: 1 }, null)).toBe(JSON.stringify({ a: 1 }));
  });

  it('gives back the metadata of every CloudWatch way in: spec body, subscription (gzip), awslogs envelope, own event fields', async () => {
    const org = await createOrg(app.url);
    const expected: Record<string, unknown>[] = [];

    const spec = fixture('cloudwatch/lambda-text-logs.json');
    expect((await post(app.url, 'cloudwatch', org.key, spec)).status).toBe(200);
    expected.push(...(await cloudWatchMetadata(JSON.parse(spec.toString('utf8')))));

    // A subscription payload with extracted fields on one entry and an invalid timestamp on another.
    const sub = subscription('stream-a', 1);
    sub.logEvents[0].extractedFields = { tool: 'list_files', n: 1.5, nested: { a: [1, 'x'] } };
    sub.logEvents[1].timestamp = 'not a time';
    expect((await post(app.url, 'cloudwatch', org.key, gzipSync(JSON.stringify(sub)), { 'content-encoding': 'gzip' })).status).toBe(200);
    expected.push(...(await cloudWatchMetadata(sub)));

    // The same stream again (a later batch): its context is the first one's.
    const again = subscription('stream-a', 2);
    const envelope = { awslogs: { data: gzipSync(JSON.stringify(again)).toString('base64') } };
    expect((await postJson(app.url, 'cloudwatch', org.key, envelope)).status).toBe(200);
    expected.push(...(await cloudWatchMetadata(envelope)));

    // A batch with nothing but its stream: no owner, filters, message type or policy level.
    const bare = { logGroup: 'g', logStream: 's', events: [{ message: 'tool=x action=allow', timestamp: '2024-05-01T10:00:00Z' }] };
    expect((await postJson(app.url, 'cloudwatch', org.key, bare)).status).toBe(200);
    expected.push(...(await cloudWatchMetadata(bare)));

    // Events of another source keep their metadata inline, a `cloudwatch` key of their own included.
    const rawMetadata = { cloudwatch: { logGroup: 'mine' }, payloadFormat: 'x', z: 1 };
    expect((await postEvents(app.url, org.key, [toolCall(1, { id: 'raw-1', metadata: rawMetadata })])).status).toBe(200);
    expected.push({ ...rawMetadata, id: 'raw-1' });

    await expectMetadata(org, expected);
    const rows = await contextRows(org);
    // spec body, stream-a (subscription and awslogs have different payloadFormat: two), the bare batch; raw: none
    expect(rows).toEqual({ events: expected.length, shared: expected.length - 1, contexts: 4 });
    // The rows keep only their own part: no log stream in any row.
    const inline = await app.ctx.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM audit_events WHERE org_id = $1 AND metadata::text LIKE '%stream-a%'`, [org.id]);
    expect(inline.rows[0].n).toBe(0);
  });

  it('gives back the metadata of Firehose records (subscription records, raw and text records) and of concurrent requests stored together', async () => {
    const org = await createOrg(app.url);
    const headers = { 'x-amz-firehose-request-id': 'req-shared-1', 'x-amz-firehose-source-arn': SOURCE_ARN };
    const batch = fixture('firehose/batch-with-bad-record.json');
    expect((await post(app.url, 'firehose', org.key, batch, headers)).status).toBe(200);
    const expected = (await firehoseEvents(JSON.parse(batch.toString('utf8')), eventsContext(headers), 10_000)).events.map((e) => e.metadata ?? {});

    // Eight requests of one log stream at once: the org's write queue stores them together (group commit).
    const bodies = Array.from({ length: 8 }, (_, i) => subscription('stream-b', 100 + i));
    const answers = await Promise.all(bodies.map((b) => postJson(app.url, 'cloudwatch', org.key, b)));
    expect(answers.map((a) => a.status)).toEqual(bodies.map(() => 200));
    const byStream = await app.ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_contexts WHERE org_id = $1 AND context -> 'cloudwatch' ->> 'logStream' = 'stream-b'`,
      [org.id],
    );
    expect(byStream.rows[0].n).toBe(1);
    // Seq order is arrival order at the queue: expected metadata in the order stored, matched by event id.
    const stored = (await storedEvents(app.url, org.key)).filter((e) => e.source === 'cloudwatch');
    const made = new Map<string, Record<string, unknown>>();
    for (const b of bodies) for (const m of await cloudWatchMetadata(b)) made.set((m.cloudwatch as { eventId: string }).eventId, m);
    for (const e of stored) expected.push(made.get(e.metadata.cloudwatch.eventId as string)!);
    expect(stored).toHaveLength(made.size);
    await expectMetadata(org, expected);
    // What retention relies on: no event's seq is above its context's last_seq.
    const above = await app.ctx.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM audit_events e JOIN audit_contexts c ON c.org_id = e.org_id AND c.id = e.context_id WHERE e.org_id = $1 AND e.seq > c.last_seq`,
      [org.id],
    );
    expect(above.rows[0].n).toBe(0);
  });
});
