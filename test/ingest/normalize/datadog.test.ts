// Tests of Datadog webhook events: tag parsing, %%% bodies, and the body > tags > title order.
import { describe, it, expect } from 'vitest';
import { normalizeDatadog, parseDatadogTags, stripDatadogMarkdown } from '../../../src/ingest/normalize/index.js';

describe('parseDatadogTags', () => {
  it.each([
    ['env:prod, service:agent-gw, monitor', { env: ['prod'], service: ['agent-gw'], monitor: [''] }],
    ['env:prod,service:agent-gw,monitor', { env: ['prod'], service: ['agent-gw'], monitor: [''] }],
    ['env:prod service:agent-gw', { env: ['prod'], service: ['agent-gw'] }],
    ['team:a,team:b,team:a', { team: ['a', 'b'] }],
    ['url:https://x.test/a:b', { url: ['https://x.test/a:b'] }],
    ['Env:Prod', { env: ['Prod'] }],
    ['key:', { key: [''] }],
    [':orphan,,  ,', {}],
    ['', {}],
  ])('parses %j', (tags, expected) => {
    expect(parseDatadogTags(tags)).toEqual(expected);
  });

  it('parses arrays, including elements holding several tags', () => {
    expect(parseDatadogTags(['env:prod', 'tool:search, action:deny', 'monitor'])).toEqual({
      env: ['prod'],
      tool: ['search'],
      action: ['deny'],
      monitor: [''],
    });
  });

  it.each([[null], [undefined], [42], [{}], [[1, null, {}]]])('gives {} for %j', (tags) => {
    expect(parseDatadogTags(tags as string)).toEqual({});
  });

  it('keeps __proto__ as a plain key', () => {
    const tags = parseDatadogTags('__proto__:polluted,constructor:x');
    expect(Object.keys(tags)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(tags)).toBe(Object.prototype);
  });

  it('bounds the number of tags and their length', () => {
    const tags = parseDatadogTags(Array.from({ length: 5000 }, (_, i) => `k${i}:${'v'.repeat(300)}`));
    expect(Object.keys(tags).length).toBe(1000);
    expect(tags.k0[0]).toHaveLength(200);
  });
});

describe('stripDatadogMarkdown', () => {
  it.each([
    ['%%%\n{"tool":"x"}\n%%%', '{"tool":"x"}'],
    ['  %%%\ntool=x\n%%%  ', 'tool=x'],
    ['plain', 'plain'],
    ['%%%\n```\n{"tool":"x"}\n```\n%%%', '{"tool":"x"}'],
    ['%%%\n```json\n{"tool":"x"}\n```\n%%%', '{"tool":"x"}'],
  ])('strips %j', (body, expected) => {
    expect(stripDatadogMarkdown(body)).toBe(expected);
  });
});

describe('normalizeDatadog', () => {
  it('reads a JSON body wrapped in %%% and the tags', () => {
    const result = normalizeDatadog({
      title: '[Triggered] Tool call denied',
      body: '%%%\n{"tool":"search","action":"deny","session_id":"sess-1","latency_ms":18,"dd":{"trace_id":1234567890123456789}}\n%%%',
      tags: 'env:prod, service:agent-gw, monitor, server:github',
    });
    expect(result).toEqual({
      toolName: 'search',
      action: 'deny',
      rawAction: null,
      actionWord: 'deny',
      serverId: 'github',
      sessionId: 'sess-1',
      latencyMs: 18,
      traceId: '1234567890123456789',
      requestId: null,
      toolCallId: null,
      method: null,
      level: null,
      format: 'datadog',
      fields: { tool: 'search', action: 'deny', session_id: 'sess-1', latency_ms: 18, dd: { trace_id: Number('1234567890123456789') } },
      timestamp: null,
      tags: { env: ['prod'], service: ['agent-gw'], monitor: [''], server: ['github'] },
      service: 'agent-gw',
    });
  });

  it('reads a logfmt body', () => {
    const result = normalizeDatadog({ body: '%%%\ntool=fetch action=redacted server=web session_id="a b"\n%%%' });
    expect(result).toMatchObject({ toolName: 'fetch', action: 'redact', serverId: 'web', sessionId: 'a b', format: 'datadog' });
    expect(result.fields).toEqual({ tool: 'fetch', action: 'redacted', server: 'web', session_id: 'a b' });
  });

  it('takes fields from tags when the body lacks them', () => {
    const result = normalizeDatadog({
      body: '%%%\n@webhook-audit-stream Error rate is high\n%%%',
      tags: ['tool:search', 'action:blocked', 'server:github', 'session:sess-7', 'service:agent-gw'],
    });
    expect(result).toMatchObject({ toolName: 'search', action: 'deny', serverId: 'github', sessionId: 'sess-7', service: 'agent-gw', fields: {} });
  });

  it('lets the body win over tags, and tags over the title', () => {
    const result = normalizeDatadog({
      title: 'tool=title-tool server=title-server session_id=title-session',
      body: '{"tool":"body-tool"}',
      tags: 'server:tag-server',
    });
    expect(result).toMatchObject({ toolName: 'body-tool', serverId: 'tag-server', sessionId: 'title-session' });
  });

  it('reads the title text last', () => {
    expect(normalizeDatadog({ title: '[Triggered] tool: shell flagged, action: alert' })).toMatchObject({
      toolName: 'shell',
      action: 'flag',
      format: 'datadog',
      fields: {},
      service: null,
      tags: {},
    });
  });

  it('prefers a mapped action from tags over an unmapped word in the body', () => {
    expect(normalizeDatadog({ body: '{"action":"tools/call"}', tags: 'action:deny' })).toMatchObject({ action: 'deny', rawAction: null });
    expect(normalizeDatadog({ body: '{"action":"tools/call"}' })).toMatchObject({ action: null, rawAction: 'tools/call' });
  });

  it('finds a JSON log line inside a markdown body', () => {
    const body = '%%%\n@webhook-audit-stream\nLog monitor matched:\n{"tool":"shell","verdict":"blocked","trace_id":"t-1"}\n\n[View logs](https://app.datadoghq.com/logs)\n%%%';
    expect(normalizeDatadog({ body, tags: 'service:gw' })).toMatchObject({
      toolName: 'shell',
      action: 'deny',
      traceId: 't-1',
      fields: { tool: 'shell', verdict: 'blocked', trace_id: 't-1' },
      service: 'gw',
    });
  });

  it('keeps the body trace id before a trace id in the title', () => {
    const result = normalizeDatadog({
      title: 'trace_id=from-title',
      body: '{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}',
    });
    expect(result.traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it('reads a Lambda log line as the body', () => {
    const body = '2024-05-01T10:00:00.000Z\t3b8c0f2e-1b2a-4c3d-9e8f-0a1b2c3d4e5f\tINFO\t{"tool":"search","action":"allow"}';
    expect(normalizeDatadog({ body })).toMatchObject({
      toolName: 'search',
      action: 'allow',
      requestId: '3b8c0f2e-1b2a-4c3d-9e8f-0a1b2c3d4e5f',
      level: 'INFO',
      timestamp: new Date('2024-05-01T10:00:00.000Z'),
      format: 'datadog',
    });
  });

  it('handles empty and missing input', () => {
    const empty = { toolName: null, action: null, serverId: null, format: 'datadog', fields: {}, tags: {}, service: null };
    expect(normalizeDatadog({})).toMatchObject(empty);
    expect(normalizeDatadog({ title: null, body: null, tags: null })).toMatchObject(empty);
    expect(normalizeDatadog(null as unknown as object)).toMatchObject(empty);
    expect(normalizeDatadog('x' as unknown as object)).toMatchObject(empty);
  });

  it('does not throw on hostile input objects', () => {
    const hostile = {
      get body(): string {
        throw new Error('boom');
      },
      tags: 'service:gw',
    };
    expect(normalizeDatadog(hostile)).toMatchObject({ format: 'datadog', tags: { service: ['gw'] } });
  });
});
