// Tests of logfmt parsing and of logfmt messages through normalizeMessage.
import { describe, it, expect } from 'vitest';
import { normalizeMessage, parseLogfmt } from '../../../src/ingest/normalize/index.js';

describe('parseLogfmt', () => {
  it.each([
    ['tool=search action=allow', { tool: 'search', action: 'allow' }],
    ['session_id="abc def"', { session_id: 'abc def' }],
    ['msg="say \\"hi\\"" path="C:\\\\tmp"', { msg: 'say "hi"', path: 'C:\\tmp' }],
    ['msg="line1\\nline2\\ttab"', { msg: 'line1\nline2\ttab' }],
    ['msg="snow \\u2603"', { msg: 'snow ☃' }],
    ['debug tool=x', { debug: '', tool: 'x' }],
    ['empty= next=1', { empty: '', next: '1' }],
    ['url=https://x.test/?a=b&c=d', { url: 'https://x.test/?a=b&c=d' }],
    ['k=1 k=2', { k: '2' }],
    ['  a=1\t\tb=2  \n', { a: '1', b: '2' }],
    ['dd.trace_id=123 http.status_code=200 @timestamp=x', { 'dd.trace_id': '123', 'http.status_code': '200', '@timestamp': 'x' }],
    ['unterminated="abc def', { unterminated: 'abc def' }],
    ['a="x"b=2', { a: 'x', b: '2' }],
    ['name="名前" 名前=値', { name: '名前', 名前: '値' }],
    ['"quoted junk" a=1', { a: '1' }],
    ['=oops a=1', { a: '1' }],
  ])('parses %j', (line, expected) => {
    expect(parseLogfmt(line)).toEqual(expected);
  });

  it.each([[''], ['   '], ['hello world'], ['"just a quote"'], ['=value'], ['no pairs here, sorry.']])('returns null without pairs: %j', (line) => {
    expect(parseLogfmt(line)).toBeNull();
  });

  it('keeps __proto__ and constructor as plain data without touching prototypes', () => {
    const parsed = parseLogfmt('__proto__=polluted constructor=x toString=y');
    expect(parsed).not.toBeNull();
    expect(Object.keys(parsed!)).toEqual(['__proto__', 'constructor', 'toString']);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(parsed, '__proto__')).toBe(true);
  });

  it('stops after a bounded number of tokens', () => {
    const line = Array.from({ length: 5000 }, (_, i) => `k${i}=v`).join(' ');
    const parsed = parseLogfmt(line)!;
    expect(Object.keys(parsed).length).toBe(1000);
  });

  it('returns null for non-strings', () => {
    expect(parseLogfmt(42 as unknown as string)).toBeNull();
    expect(parseLogfmt(null as unknown as string)).toBeNull();
  });
});

describe('normalizeMessage with logfmt', () => {
  it('reads the example line', () => {
    expect(normalizeMessage('tool=search action=allow latency_ms=12 server=s1 session_id="abc def"')).toEqual({
      toolName: 'search',
      action: 'allow',
      rawAction: null,
      actionWord: 'allow',
      serverId: 's1',
      sessionId: 'abc def',
      latencyMs: 12,
      traceId: null,
      requestId: null,
      toolCallId: null,
      method: null,
      level: null,
      format: 'logfmt',
      fields: { tool: 'search', action: 'allow', latency_ms: '12', server: 's1', session_id: 'abc def' },
      timestamp: null,
    });
  });

  it.each([
    ['toolName=search', 'toolName', 'search'],
    ['tool_name="web search"', 'toolName', 'web search'],
    ['tool=fetch', 'toolName', 'fetch'],
    ['tool.name=fetch', 'toolName', 'fetch'],
    ['decision=blocked', 'action', 'deny'],
    ['verdict=REDACTED', 'action', 'redact'],
    ['outcome=flagged', 'action', 'flag'],
    ['serverId=github', 'serverId', 'github'],
    ['server_id=github', 'serverId', 'github'],
    ['mcp_server=github', 'serverId', 'github'],
    ['server=github', 'serverId', 'github'],
    ['sessionId=s-1', 'sessionId', 's-1'],
    ['session_id=s-1', 'sessionId', 's-1'],
    ['latencyMs=7', 'latencyMs', 7],
    ['latency_ms=7.5', 'latencyMs', 8],
    ['duration_ms=12.4', 'latencyMs', 12],
    ['durationMs=0', 'latencyMs', 0],
    ['traceId=abc123', 'traceId', 'abc123'],
    ['trace_id=abc123', 'traceId', 'abc123'],
    ['dd.trace_id=18446744073709551615', 'traceId', '18446744073709551615'],
    ['traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'traceId', '4bf92f3577b34da6a3ce929d0e0e4736'],
    ['requestId=r-1', 'requestId', 'r-1'],
    ['request_id=r-1', 'requestId', 'r-1'],
    ['aws_request_id=r-1', 'requestId', 'r-1'],
    ['awsRequestId=r-1', 'requestId', 'r-1'],
    ['level=info', 'level', 'INFO'],
    ['lvl=warn', 'level', 'WARN'],
  ] as const)('recognizes %s', (line, field, value) => {
    const result = normalizeMessage(line);
    expect(result.format).toBe('logfmt');
    expect(result[field]).toBe(value);
  });

  it('reads the timestamp from ts= and time=', () => {
    expect(normalizeMessage('ts=2024-05-01T10:00:00Z tool=x').timestamp?.toISOString()).toBe('2024-05-01T10:00:00.000Z');
    expect(normalizeMessage('time=1714557600 tool=x').timestamp?.toISOString()).toBe('2024-05-01T10:00:00.000Z');
  });

  it('keeps an unknown action word as rawAction', () => {
    const result = normalizeMessage('tool=search action=invoke');
    expect(result.action).toBeNull();
    expect(result.rawAction).toBe('invoke');
  });

  it.each([['latency_ms=-5'], ['latency_ms=abc'], ['latency_ms=1e999'], ['latency_ms=99999999999']])('rejects bad latency %s', (line) => {
    expect(normalizeMessage(line).latencyMs).toBeNull();
  });

  it('treats a line as logfmt only when most tokens are pairs', () => {
    expect(normalizeMessage('level=error tool=x connection reset').format).toBe('text');
    expect(normalizeMessage('ERROR tool=x action=deny').format).toBe('logfmt');
    expect(normalizeMessage('hello world').format).toBe('text');
    expect(normalizeMessage('a=1').format).toBe('logfmt');
  });

  it('finds an X-Ray Root= inside a quoted value', () => {
    const result = normalizeMessage('tool=x header="Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"');
    expect(result.traceId).toBe('1-5759e988-bd862e3fe1be46a994272793');
  });
});
