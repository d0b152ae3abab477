// POST /api/v1/ingest/datadog against a real server, both backends: templates, form encoding, timestamps, tags, dedupe, errors.
import { describe, expect, it } from 'vitest';
import { backendNames } from '../helpers/backends.js';
import { bearer, createOrg, http } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';
import { openSse } from '../helpers/sse.js';
import { columns, expectStreamedExactly, fixture, fixtureJson, ingestedEvents, post, postJson, storedEvents } from './ingest-kit.js';

const BODY_LIMIT = 64 * 1024;
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const call = (occurredAt: string, toolName: string, action: string | null, serverId: string | null, sessionId: string | null, latencyMs: number | null = null) => ({
  type: 'tool_call',
  source: 'datadog',
  occurredAt,
  serverId,
  sessionId,
  toolName,
  action,
  latencyMs,
});

describe.each(backendNames)('Datadog ingest (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { BODY_LIMIT_BYTES: String(BODY_LIMIT) });

  /** Posts one fixture to a fresh org, checks the stream, and returns the one stored event. */
  async function ingestFixture(path: string, headers: Record<string, string> = {}) {
    const org = await createOrg(app.url);
    const sse = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const r = await post(app.url, 'datadog', org.key, fixture(path), headers);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ accepted: 1, duplicates: 0 });
    const items = await ingestedEvents(app.url, org.key);
    expect(items).toHaveLength(1);
    await expectStreamedExactly(sse, app.url, org.key, await storedEvents(app.url, org.key));
    return items[0];
  }

  it("stores Datadog's default webhook template field by field (%%% body, last_updated time, org, string id)", async () => {
    const e = await ingestFixture('datadog/default-template.json');
    expect(columns(e)).toEqual(call('2024-05-01T10:15:00.000Z', 'exec_sql', 'deny', 'mcp-postgres', 'sess-dd-1', 9));
    const sent = fixtureJson('datadog/default-template.json');
    expect(e.metadata).toMatchObject({ source_detail: null, traceId: null, message: sent.body, format: 'datadog', payloadFormat: 'datadog' });
    expect(e.metadata.datadog).toEqual({
      id: '7345264912781012345',
      title: '[Triggered] MCP policy block on mcp-postgres',
      eventType: 'query_alert_monitor',
      tags: {},
      lastUpdated: '1714558500000',
      date: '1714558499000',
      org: { id: '321813', name: 'Acme AI' },
    });
    expect(e.metadata.rawAction).toBeUndefined();
  });

  it('stores the spec body: tags string with service, tool, action, server and session tags; request id as traceId', async () => {
    const e = await ingestFixture('datadog/spec-body.json');
    expect(columns(e)).toEqual(call('2024-05-01T10:20:00.000Z', 'fetch_url', 'allow', 'mcp-web', 'sess-dd-2'));
    expect(e.metadata).toMatchObject({ source_detail: 'agent-gw', traceId: 'req-dd-2', requestId: 'req-dd-2', message: 'fetch_url finished in 120 ms request_id=req-dd-2' });
    expect(e.metadata.datadog).toEqual({
      title: 'Tool call: fetch_url',
      eventType: 'log_alert',
      timestamp: '2024-05-01T10:20:00.000Z',
      rawTags: fixtureJson('datadog/spec-body.json').tags,
      tags: { env: ['prod'], service: ['agent-gw'], monitor: [''], tool: ['fetch_url'], action: ['allow'], server: ['mcp-web'], session: ['sess-dd-2'] },
    });
  });

  it('stores a custom template with extras: epoch-seconds number time, tags array, JSON body, unquoted 19-digit id, unknown fields kept', async () => {
    const e = await ingestFixture('datadog/custom-template-extras.json');
    expect(columns(e)).toEqual(call('2024-05-01T10:20:00.000Z', 'lookup_customer', null, 'mcp-crm', null));
    expect(e.metadata).toMatchObject({ source_detail: 'crm-agent', traceId: '0af7651916cd43dd8448eb211c80319c', rawAction: 'anonymized', format: 'datadog' });
    expect(e.metadata.fields).toMatchObject({ tool: 'lookup_customer', action: 'anonymized', server: 'mcp-crm' });
    expect(e.metadata.datadog).toEqual({
      id: '7345264912781012399',
      title: '[Recovered] Redaction rate on mcp-crm',
      tags: { env: ['staging'], service: ['crm-agent'], team: ['platform'] },
      rawTags: ['env:staging', 'service:crm-agent', 'team:platform'],
      timestamp: 1714558800,
      alertTransition: 'Recovered',
      alertId: '98765432',
      hostname: 'i-0abc123def4567890',
      priority: 'P2',
      link: 'https://app.datadoghq.com/event/event?id=7345264912781012399',
      extra: {
        alert_scope: 'service:crm-agent',
        snapshot: 'https://p.datadoghq.com/snapshot/view/dd-snapshots-prod/org_321813/2024-05-01/abc.png',
        user: 'Datadog Monitor',
      },
    });
  });

  it('stores a form-encoded event', async () => {
    const e = await ingestFixture('datadog/form-encoded.txt', FORM);
    expect(columns(e)).toEqual(call('2024-05-01T10:23:20.000Z', 'transfer_funds', 'deny', 'mcp-bank', 'sess-dd-4'));
    expect(e.metadata).toMatchObject({ source_detail: 'payments-agent', message: 'tool=transfer_funds verdict=denied server=mcp-bank session=sess-dd-4' });
    expect(e.metadata.datadog).toMatchObject({ id: '7345264912781012500', title: 'Tool call blocked: transfer_funds', eventType: 'error', timestamp: '1714559000000', rawTags: 'env:prod, service:payments-agent' });
  });

  it('reads ISO 8601, epoch ms and epoch s as strings or numbers, with timestamp > last_updated > date > message > now', async () => {
    const org = await createOrg(app.url);
    const cases: [Record<string, unknown>, string][] = [
      [{ timestamp: '2024-05-01T12:00:00Z' }, '2024-05-01T12:00:00.000Z'],
      [{ timestamp: '2024-05-01T14:00:00.250+02:00' }, '2024-05-01T12:00:00.250Z'],
      [{ timestamp: 1714564800123 }, '2024-05-01T12:00:00.123Z'],
      [{ timestamp: '1714564800123' }, '2024-05-01T12:00:00.123Z'],
      [{ timestamp: 1714564800 }, '2024-05-01T12:00:00.000Z'],
      [{ timestamp: '1714564800' }, '2024-05-01T12:00:00.000Z'],
      [{ timestamp: 1714564800.5 }, '2024-05-01T12:00:00.500Z'],
      [{ timestamp: '2024-05-01T12:00:00Z', last_updated: '1', date: '2' }, '2024-05-01T12:00:00.000Z'],
      [{ timestamp: 'not a time', last_updated: '1714564801000', date: '1714564802000' }, '2024-05-01T12:00:01.000Z'],
      [{ timestamp: '', last_updated: '', date: '1714564802000' }, '2024-05-01T12:00:02.000Z'],
      [{ body: '{"tool":"t","timestamp":"2024-05-01T12:00:03Z"}' }, '2024-05-01T12:00:03.000Z'],
    ];
    for (const [i, [fields]] of cases.entries()) {
      const r = await postJson(app.url, 'datadog', org.key, { title: `case ${i}`, body: 'tool=t', ...fields });
      expect(r.status, JSON.stringify(fields)).toBe(200);
    }
    const before = Date.now();
    await postJson(app.url, 'datadog', org.key, { title: 'no time', body: 'tool=t' });
    const items = await ingestedEvents(app.url, org.key);
    expect(items.slice(0, cases.length).map((e) => e.occurredAt)).toEqual(cases.map(([, want]) => want));
    expect(Date.parse(items[cases.length].occurredAt)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('takes tags as a string (commas and/or spaces) or an array, and strips %%% markers from the body before parsing', async () => {
    const org = await createOrg(app.url);
    await postJson(app.url, 'datadog', org.key, { title: 'a', tags: 'service:svc-a tool:from-tag action:denied', body: '%%%\nsomething happened\n%%%' });
    await postJson(app.url, 'datadog', org.key, { title: 'b', tags: ['service:svc-b', 'server:srv-b'], body: '%%%\n```\n{"tool":"fenced","decision":"allow"}\n```\n%%%' });
    const [a, b] = await ingestedEvents(app.url, org.key);
    expect(columns(a)).toMatchObject({ toolName: 'from-tag', action: 'deny' });
    expect(a.metadata.source_detail).toBe('svc-a');
    expect(columns(b)).toMatchObject({ toolName: 'fenced', action: 'allow', serverId: 'srv-b' });
    expect(b.metadata.source_detail).toBe('svc-b');
  });

  it('stores an event with no tool name as a log entry that is not streamed', async () => {
    const org = await createOrg(app.url);
    const sse = await openSse(`${app.url}/api/v1/events`, bearer(org.key));
    const r = await postJson(app.url, 'datadog', org.key, { title: 'Disk usage high', body: 'disk at 91%', tags: 'service:db-host', id: 'log-only-1' });
    expect(r.body).toEqual({ accepted: 1, duplicates: 0 });
    const [e] = await ingestedEvents(app.url, org.key);
    expect(columns(e)).toEqual({ type: 'log', source: 'datadog', occurredAt: e.occurredAt, serverId: null, sessionId: null, toolName: null, action: null, latencyMs: null });
    expect(e.metadata).toMatchObject({ source_detail: 'db-host', message: 'disk at 91%', datadog: { id: 'log-only-1', title: 'Disk usage high' } });
    await expectStreamedExactly(sse, app.url, org.key, await storedEvents(app.url, org.key));
  });

  it('dedupes by id (dd:<id>) or Idempotency-Key; without either every event is stored, identical ones too', async () => {
    const org = await createOrg(app.url);
    const withId = fixtureJson('datadog/default-template.json');
    expect((await postJson(app.url, 'datadog', org.key, withId)).body).toEqual({ accepted: 1, duplicates: 0 });
    expect((await postJson(app.url, 'datadog', org.key, withId)).body).toEqual({ accepted: 0, duplicates: 1 });
    // Same id, the update time changed: still the same Datadog event.
    expect((await postJson(app.url, 'datadog', org.key, { ...withId, last_updated: '1714558600000' })).body).toEqual({ accepted: 0, duplicates: 1 });
    // No id: content never identifies an event. Two identical notifications are two records.
    const noId = fixtureJson('datadog/spec-body.json');
    expect((await postJson(app.url, 'datadog', org.key, noId)).body).toEqual({ accepted: 1, duplicates: 0 });
    expect((await postJson(app.url, 'datadog', org.key, noId)).body).toEqual({ accepted: 1, duplicates: 0 });
    // The form-encoded event carries an id: its repeat is the same event.
    expect((await post(app.url, 'datadog', org.key, fixture('datadog/form-encoded.txt'), FORM)).body).toEqual({ accepted: 1, duplicates: 0 });
    expect((await post(app.url, 'datadog', org.key, fixture('datadog/form-encoded.txt'), FORM)).body).toEqual({ accepted: 0, duplicates: 1 });
    // With an Idempotency-Key the retry is stored once and answers the first counts.
    const key = { 'idempotency-key': '"dd-retry-42"' };
    expect((await postJson(app.url, 'datadog', org.key, noId, key)).body).toEqual({ accepted: 1, duplicates: 0 });
    expect((await postJson(app.url, 'datadog', org.key, noId, key)).body).toEqual({ accepted: 1, duplicates: 0 });
    expect(await ingestedEvents(app.url, org.key)).toHaveLength(5);
  });

  it('answers 400 with issue paths, 413, 415, 401 and 403 and stores nothing', async () => {
    const org = await createOrg(app.url);
    const wrongTypes = await postJson(app.url, 'datadog', org.key, { title: { nested: true }, tags: 5, body: 'x', timestamp: [1] });
    expect(wrongTypes.status).toBe(400);
    expect(wrongTypes.body.code).toBe('invalid_request');
    expect(wrongTypes.body.issues.map((i: { path: string }) => i.path).sort()).toEqual(['tags', 'timestamp', 'title']);
    for (const body of [[], 'just text', 7, null]) {
      const r = await postJson(app.url, 'datadog', org.key, body);
      expect(r.status).toBe(400);
      expect(r.body.issues[0].path).toBe('(root)');
    }
    const empty = await postJson(app.url, 'datadog', org.key, { hostname: 'h', priority: 'P1', title: '', tags: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.message).toContain('template');
    expect((await post(app.url, 'datadog', org.key, '{"title": "x"')).status).toBe(400);

    const tooBig = await postJson(app.url, 'datadog', org.key, { title: 't', body: 'x'.repeat(BODY_LIMIT) });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.code).toBe('payload_too_large');
    for (const type of ['application/xml', 'application/octet-stream', 'application/x-ndjson']) {
      const r = await post(app.url, 'datadog', org.key, '{"title":"x"}', { 'content-type': type });
      expect(r.status, type).toBe(415);
    }
    const plain = await post(app.url, 'datadog', org.key, '{"title":"as text/plain"}', { 'content-type': 'text/plain' });
    expect(plain.body).toEqual({ accepted: 1, duplicates: 0 });

    const none = await http(`${app.url}/api/v1/ingest/datadog`, { method: 'POST', json: { title: 'x' } });
    expect(none.status).toBe(401);
    const readOnly = await createOrg(app.url, { scopes: ['events:read'] });
    expect((await postJson(app.url, 'datadog', readOnly.key, { title: 'x' })).status).toBe(403);
    expect((await ingestedEvents(app.url, org.key)).map((e) => e.metadata.datadog.title)).toEqual(['as text/plain']);
  });
});
