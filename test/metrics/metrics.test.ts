// GET /metrics after real traffic: every metric operators need is exposed with Prometheus names and moves when it should.
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendInTransaction } from '../../src/audit/event-log/append.js';
import { copySink } from '../../src/audit/event-log/copy-sink.js';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { backendNames, createTestDatabase, realBackendAvailable } from '../helpers/backends.js';
import { bearer, createOrg, http, postEvents, startApp, toolCall, type RunningApp } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { startPrivateRedis, type PrivateRedis } from '../helpers/private-redis.js';
import { openSse } from '../helpers/sse.js';

interface Series {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Scrape {
  text: string;
  contentType: string;
  types: Map<string, string>;
  /** Sum of the series of `name` whose labels include `labels`; 0 when there is none. */
  value(name: string, labels?: Record<string, string>): number;
}

function parse(text: string, contentType: string): Scrape {
  const types = new Map<string, string>();
  const series: Series[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)/.exec(line);
    if (type) types.set(type[1], type[2]);
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    series.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return {
    text,
    contentType,
    types,
    value: (name, labels = {}) =>
      series.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0),
  };
}

async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return parse(await res.text(), res.headers.get('content-type') ?? '');
}

/** A tool call stored without being published (as if its bus message had been lost). */
function unpublished(i: number): NewAuditEvent {
  return { type: 'tool_call', source: 'raw', occurredAt: new Date(), serverId: 'srv-1', toolName: 'gap', action: 'allow', latencyMs: i, metadata: {}, dedupeKey: `raw:id:gap-${i}-${randomBytes(4).toString('hex')}` };
}

const NAMED_BY_THE_ISSUE = [
  ['audit_stream_sse_streams_open', 'gauge'],
  ['audit_stream_sse_organizations', 'gauge'],
  ['audit_stream_ingest_events_total', 'counter'],
  ['audit_stream_events_stored_total', 'counter'],
  ['audit_stream_bus_events_published_total', 'counter'],
  ['audit_stream_sse_events_delivered_total', 'counter'],
  ['audit_stream_sse_events_replayed_total', 'counter'],
  ['audit_stream_sse_slow_client_disconnects_total', 'counter'],
  ['audit_stream_bus_reconnects_total', 'counter'],
  ['audit_stream_gap_fills_total', 'counter'],
  ['audit_stream_ingest_duration_seconds', 'histogram'],
  ['audit_stream_anomalies_total', 'counter'],
  ['process_cpu_seconds_total', 'counter'],
  ['process_resident_memory_bytes', 'gauge'],
  ['nodejs_heap_size_used_bytes', 'gauge'],
  ['nodejs_eventloop_lag_seconds', 'gauge'],
] as const;

describe.each(backendNames)('GET /metrics (%s)', (backendName) => {
  // Alerts only where a test asks for them (per-org settings); a small buffer so a stalled client is cut quickly.
  const { app } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000', SSE_BUFFER_LIMIT_BYTES: '65536' });

  it('exposes every metric the service promises, with Prometheus names, the default process metrics, and no organization ids', async () => {
    const org = await createOrg(app.url);
    const c = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    await postEvents(app.url, org.key, [toolCall(1)]);
    await c.waitForCount(1);
    const m = await scrape(app.url);
    expect(m.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const [name, type] of NAMED_BY_THE_ISSUE) expect(m.types.get(name), name).toBe(type);
    for (const [name, type] of m.types) {
      expect(name).toMatch(/^[a-z][a-z0-9_]*$/);
      if (type === 'counter') expect(name, name).toMatch(/_total$/);
      if (name.startsWith('audit_stream_') && type === 'histogram') expect(name).toMatch(/_seconds$/);
    }
    // Streams are counted per instance and organizations as a number, never as one label per organization.
    expect(m.text).not.toContain(org.id);
    expect(m.text).not.toMatch(/org(_id|Id|anization)="/);
    c.close();
  });

  it('no request creates metric series: 2,000 anonymous requests to made-up ingest paths leave /metrics as it was', async () => {
    const org = await createOrg(app.url);
    // Every known series exists once, so what follows could only add new ones.
    expect((await postEvents(app.url, org.key, [toolCall(1)])).status).toBe(200);
    expect((await http(`${app.url}/api/v1/ingest/events`, { method: 'POST', json: [] })).status).toBe(401);
    const before = await scrape(app.url);
    const words = Array.from({ length: 2000 }, (_, i) => `w${i.toString(26).replace(/\d/g, (d) => "qrstuvwxyz"[Number(d)])}${randomBytes(3).toString("hex").replace(/\d/g, "k")}`);
    const methods = ['POST', 'GET', 'OPTIONS', 'PUT'];
    for (let i = 0; i < words.length; i += 50) {
      await Promise.all(
        words.slice(i, i + 50).map(async (w, j) => {
          const method = methods[(i + j) % methods.length];
          const res = await fetch(`${app.url}/api/v1/ingest/${w}${j % 3 === 0 ? '/v1/logs' : ''}`, { method, headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' }, body: method === 'POST' || method === 'PUT' ? '{}' : undefined });
          await res.arrayBuffer();
          expect(res.status, `${method} ${w}`).toBeGreaterThanOrEqual(400);
        }),
      );
    }
    const after = await scrape(app.url);
    console.log(`/metrics: ${before.text.length} bytes before, ${after.text.length} bytes after 2,000 anonymous requests to unknown ingest paths`);
    for (const w of words.slice(0, 100)) expect(after.text).not.toContain(w);
    // The service's own series are exactly those of before (values aside); the size moves only by process figures
    // (digits, and the Node runtime's GC series appearing on its first GC of a kind).
    const series = (t: string) => t.split('\n').filter((l) => l.startsWith('audit_stream_')).map((l) => l.replace(/ \S+$/, ''));
    expect(series(after.text)).toEqual(series(before.text));
    expect(after.text.length - before.text.length).toBeLessThan(4096);
  });

  it('counts open streams and organizations with streams, and lets them fall when streams close', async () => {
    // Streams of earlier tests were closed by their clients; wait until the server has seen every close.
    await expect.poll(async () => (await scrape(app.url)).value('audit_stream_sse_streams_open')).toBe(0);
    const before = await scrape(app.url);
    const org = await createOrg(app.url);
    const a = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const b = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const open = await scrape(app.url);
    expect(open.value('audit_stream_sse_streams_open')).toBe(before.value('audit_stream_sse_streams_open') + 2);
    expect(open.value('audit_stream_sse_organizations')).toBe(before.value('audit_stream_sse_organizations') + 1);
    a.close();
    b.close();
    await expect.poll(async () => (await scrape(app.url)).value('audit_stream_sse_streams_open')).toBe(before.value('audit_stream_sse_streams_open'));
    expect((await scrape(app.url)).value('audit_stream_sse_organizations')).toBe(before.value('audit_stream_sse_organizations'));
    expect((await scrape(app.url)).value('audit_stream_sse_streams_closed_total', { reason: 'client' })).toBeGreaterThanOrEqual(2);
  });

  it('counts ingested, stored, duplicated, published and delivered events by source, and times ingest requests', async () => {
    const org = await createOrg(app.url);
    const c1 = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const c2 = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const before = await scrape(app.url);

    const raw = Array.from({ length: 5 }, (_, i) => toolCall(i, { sessionId: 'metrics-s1' }));
    expect((await postEvents(app.url, org.key, raw)).body).toEqual({ accepted: 5, duplicates: 0 });
    expect((await postEvents(app.url, org.key, raw)).body).toEqual({ accepted: 0, duplicates: 5 });
    const cw = JSON.parse(readFileSync(new URL('../fixtures/cloudwatch/lambda-text-logs.json', import.meta.url), 'utf8'));
    const stored = await http(`${app.url}/api/v1/ingest/cloudwatch`, { method: 'POST', headers: bearer(org.key), json: cw });
    expect(stored.status).toBe(200);
    const cwEntries = cw.events.length as number;
    expect(stored.body.accepted).toBe(cwEntries);

    // Streamed: 5 raw tool calls, the session_update of the new session, and the CloudWatch lines that named a tool.
    const streamed = (await http(`${app.url}/api/v1/audit-events?limit=1000`, { headers: bearer(org.key) })).body.items.filter((e: { type: string }) => e.type !== 'log').length;
    await c1.waitForCount(streamed);
    await c2.waitForCount(streamed);
    const after = await scrape(app.url);
    const delta = (name: string, labels?: Record<string, string>) => after.value(name, labels) - before.value(name, labels);

    expect(delta('audit_stream_ingest_events_total', { source: 'raw', outcome: 'stored' })).toBe(5);
    expect(delta('audit_stream_ingest_events_total', { source: 'raw', outcome: 'duplicate' })).toBe(5);
    expect(delta('audit_stream_ingest_events_total', { source: 'cloudwatch', outcome: 'stored' })).toBe(cwEntries);
    expect(delta('audit_stream_events_stored_total', { source: 'raw', type: 'tool_call' })).toBe(5);
    expect(delta('audit_stream_events_stored_total', { source: 'system', type: 'session_update' })).toBeGreaterThanOrEqual(1);
    expect(delta('audit_stream_events_stored_total', { source: 'cloudwatch' })).toBe(cwEntries);
    expect(delta('audit_stream_events_stored_total', { source: 'cloudwatch', type: 'log' })).toBeGreaterThan(0);
    expect(delta('audit_stream_bus_events_published_total')).toBe(streamed);
    expect(delta('audit_stream_sse_events_delivered_total')).toBe(2 * streamed);
    expect(delta('audit_stream_ingest_requests_total', { source: 'raw', status: '200' })).toBe(2);
    expect(delta('audit_stream_ingest_requests_total', { source: 'cloudwatch', status: '200' })).toBe(1);
    expect(delta('audit_stream_ingest_duration_seconds_count', { source: 'raw' })).toBe(2);
    expect(delta('audit_stream_ingest_duration_seconds_count', { source: 'cloudwatch' })).toBe(1);
    expect(delta('audit_stream_ingest_duration_seconds_sum', { source: 'cloudwatch' })).toBeGreaterThan(0);
    expect(delta('audit_stream_ingest_duration_seconds_bucket', { source: 'raw', le: '+Inf' })).toBe(2);
    c1.close();
    c2.close();
  });

  it('counts replayed events on reconnect and gap fills when a published batch went missing', async () => {
    const org = await createOrg(app.url);
    await postEvents(app.url, org.key, Array.from({ length: 10 }, (_, i) => toolCall(i)));
    const before = await scrape(app.url);
    const replayed = await openSse(`${app.url}/api/v1/events`, { ...bearer(org.key), 'last-event-id': '0' });
    await replayed.waitForCount(10);
    const mid = await scrape(app.url);
    expect(mid.value('audit_stream_sse_events_replayed_total') - before.value('audit_stream_sse_events_replayed_total')).toBe(10);

    // Three events committed without a bus message: the next published batch starts past a gap the feed must fill.
    await app.ctx.db.transaction((tx) => appendInTransaction(tx, org.id, { events: [unpublished(1), unpublished(2), unpublished(3)] }, copySink));
    await postEvents(app.url, org.key, [toolCall(11)]);
    await replayed.waitForCount(14);
    expect(replayed.events.map((e) => Number(e.id))).toEqual(Array.from({ length: 14 }, (_, i) => i + 1));
    const after = await scrape(app.url);
    expect(after.value('audit_stream_gap_fills_total') - mid.value('audit_stream_gap_fills_total')).toBeGreaterThanOrEqual(1);
    expect(after.value('audit_stream_gap_filled_events_total') - mid.value('audit_stream_gap_filled_events_total')).toBe(3);
    replayed.close();
  });

  it('counts a client cut for not keeping up', async () => {
    const org = await createOrg(app.url);
    const before = await scrape(app.url);
    const slow = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    slow.pause();
    const long = 'x'.repeat(190);
    for (let i = 0; i < 4; i++) {
      const batch = Array.from({ length: 4000 }, (_, j) => toolCall(i * 4000 + j, { serverId: `s-${long}`, toolName: `t-${long}` }));
      expect((await postEvents(app.url, org.key, batch)).status).toBe(200);
    }
    await expect
      .poll(async () => (await scrape(app.url)).value('audit_stream_sse_slow_client_disconnects_total') - before.value('audit_stream_sse_slow_client_disconnects_total'), { timeout: 30_000 })
      .toBe(1);
    expect((await scrape(app.url)).value('audit_stream_sse_streams_closed_total', { reason: 'slow' })).toBeGreaterThanOrEqual(1);
    slow.close();
  });

  it('counts anomaly alerts by type', async () => {
    const org = await createOrg(app.url);
    const settings = await http(`${app.url}/api/v1/anomaly-settings`, { method: 'PUT', headers: bearer(org.key), json: { windowSeconds: 10, minRate: 60, multiplier: 3, cooldownSeconds: 300 } });
    expect(settings.status).toBe(200);
    const before = await scrape(app.url);
    const c = await openSse(`${app.url}/api/v1/events?types=anomaly`, bearer(org.key));
    await postEvents(app.url, org.key, Array.from({ length: 12 }, (_, i) => toolCall(i, { toolName: 'metrics-burst' })));
    await c.waitForCount(1, 20_000);
    const after = await scrape(app.url);
    expect(after.value('audit_stream_anomalies_total', { anomaly_type: 'rate_spike' }) - before.value('audit_stream_anomalies_total', { anomaly_type: 'rate_spike' })).toBe(1);
    expect(after.value('audit_stream_events_stored_total', { type: 'anomaly' }) - before.value('audit_stream_events_stored_total', { type: 'anomaly' })).toBe(1);
    c.close();
  });
});

describe.runIf(realBackendAvailable)('GET /metrics: bus reconnects (Postgres + a private Redis)', () => {
  let redis: PrivateRedis;
  let db: { url: string; drop(): Promise<void> };
  let app: RunningApp;
  const prefix = `as-metrics-${randomBytes(4).toString('hex')}:`;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    db = await createTestDatabase();
    app = await startApp({ DATABASE_URL: db.url, REDIS_URL: redis.url, REDIS_PREFIX: prefix, ANOMALY_MIN_RATE: '1000000000' });
  });
  afterAll(async () => {
    await app?.close();
    await redis?.stop();
    await db?.drop();
  });

  it('counts a reconnection of the bus subscriber, and the stream carries on', async () => {
    const org = await createOrg(app.url);
    const c = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const before = await scrape(app.url);
    expect(await redis.killClients(`${prefix}sub`)).toBe(1);
    await expect.poll(async () => (await scrape(app.url)).value('audit_stream_bus_reconnects_total') - before.value('audit_stream_bus_reconnects_total'), { timeout: 20_000 }).toBe(1);
    await postEvents(app.url, org.key, [toolCall(1), toolCall(2)]);
    await c.waitForCount(2);
    c.close();
  });
});
