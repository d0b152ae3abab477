// Tests of JSON log messages through normalizeMessage: spellings, nesting, Lambda JSON formats, big integer ids.
import { describe, it, expect } from 'vitest';
import { normalizeMessage } from '../../../src/ingest/normalize/index.js';

const REQUEST_ID = '79b4f56e-95b1-4643-9700-2807f4e68189';

describe('normalizeMessage with JSON', () => {
  it.each([
    ['{"tool":"search"}', 'toolName', 'search'],
    ['{"toolName":"search"}', 'toolName', 'search'],
    ['{"tool_name":"search"}', 'toolName', 'search'],
    ['{"tool":{"name":"search","arguments":{"q":"x"}}}', 'toolName', 'search'],
    ['{"tool.name":"search"}', 'toolName', 'search'],
    ['{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{}}}', 'toolName', 'search'],
    ['{"action":"allow"}', 'action', 'allow'],
    ['{"decision":"denied"}', 'action', 'deny'],
    ['{"verdict":"masked"}', 'action', 'redact'],
    ['{"outcome":"alert"}', 'action', 'flag'],
    ['{"serverId":"github"}', 'serverId', 'github'],
    ['{"server_id":"github"}', 'serverId', 'github'],
    ['{"server":"github"}', 'serverId', 'github'],
    ['{"mcp_server":"github"}', 'serverId', 'github'],
    ['{"server":{"name":"github"}}', 'serverId', 'github'],
    ['{"server":{"id":"srv-1","name":"github"}}', 'serverId', 'srv-1'],
    ['{"serverId":42}', 'serverId', '42'],
    ['{"sessionId":"sess-1"}', 'sessionId', 'sess-1'],
    ['{"session_id":"sess-1"}', 'sessionId', 'sess-1'],
    ['{"latencyMs":12}', 'latencyMs', 12],
    ['{"latency_ms":12.5}', 'latencyMs', 13],
    ['{"duration_ms":"40"}', 'latencyMs', 40],
    ['{"durationMs":0.4}', 'latencyMs', 0],
    ['{"traceId":"abc"}', 'traceId', 'abc'],
    ['{"trace_id":"abc"}', 'traceId', 'abc'],
    ['{"dd.trace_id":"123"}', 'traceId', '123'],
    ['{"dd":{"trace_id":"123","span_id":"456"}}', 'traceId', '123'],
    ['{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}', 'traceId', '4bf92f3577b34da6a3ce929d0e0e4736'],
    ['{"headers":{"x-amzn-trace-id":"Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"}}', 'traceId', '1-5759e988-bd862e3fe1be46a994272793'],
    ['{"requestId":"r1"}', 'requestId', 'r1'],
    ['{"request_id":"r1"}', 'requestId', 'r1'],
    ['{"aws_request_id":"r1"}', 'requestId', 'r1'],
    ['{"awsRequestId":"r1"}', 'requestId', 'r1'],
    ['{"level":"error"}', 'level', 'ERROR'],
    ['{"levelname":"WARNING"}', 'level', 'WARNING'],
    ['{"severity":"Info"}', 'level', 'INFO'],
    ['{"level":50}', 'level', 'ERROR'],
    ['{"log":{"level":"debug"}}', 'level', 'DEBUG'],
  ] as const)('recognizes %s', (message, field, value) => {
    const result = normalizeMessage(message);
    expect(result.format).toBe('json');
    expect(result[field]).toBe(value);
  });

  it.each([
    ['{"timestamp":"2024-05-01T10:00:00.000Z"}'],
    ['{"@timestamp":"2024-05-01T10:00:00Z"}'],
    ['{"time":1714557600000}'],
    ['{"ts":1714557600}'],
    ['{"ts":"1714557600.000"}'],
  ])('reads the timestamp of %s', (message) => {
    expect(normalizeMessage(message).timestamp?.toISOString()).toBe('2024-05-01T10:00:00.000Z');
  });

  it('searches nested objects', () => {
    const result = normalizeMessage('{"event":{"tool":{"name":"search"}}, "mcp":{"server":"s1"}}');
    expect(result).toMatchObject({ toolName: 'search', serverId: 's1', format: 'json' });
    expect(result.fields).toEqual({ event: { tool: { name: 'search' } }, mcp: { server: 's1' } });
  });

  it('prefers shallower fields', () => {
    const result = normalizeMessage('{"request":{"tool":"inner","session_id":"deep"},"tool":"outer","session_id":"top"}');
    expect(result.toolName).toBe('outer');
    expect(result.sessionId).toBe('top');
  });

  it('stops searching beyond six levels of nesting', () => {
    const nest = (depth: number, leaf: string) => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
    expect(normalizeMessage(nest(6, '{"tool":"found"}')).toolName).toBe('found');
    expect(normalizeMessage(nest(7, '{"tool":"too-deep"}')).toolName).toBeNull();
  });

  it('searches the objects among the first items of arrays; the first match wins', () => {
    expect(normalizeMessage('{"calls":[{"tool":"a"},{"tool":"b"}]}').toolName).toBe('a');
    expect(normalizeMessage('{"calls":[1,"x",{"rpc":[{"id":"1"},{"tool_name":"deep","action":"blocked"}]}]}')).toMatchObject({ toolName: 'deep', action: 'deny', actionWord: 'blocked' });
    // Shallower fields win over array items, as with nested objects.
    expect(normalizeMessage('{"calls":[{"tool":"a"}],"tool":"top"}').toolName).toBe('top');
  });

  it('reads only the first 20 items of an array', () => {
    const items = Array.from({ length: 20 }, (_, i) => ({ n: i }));
    expect(normalizeMessage(JSON.stringify({ calls: [...items, { tool: 'late' }] })).toolName).toBeNull();
    expect(normalizeMessage(JSON.stringify({ calls: [...items.slice(1), { tool: 'in-time' }] })).toolName).toBe('in-time');
  });

  it('reads OpenTelemetry attributes written as OTLP JSON key/value lists', () => {
    const attributes = [
      { key: 'gen_ai.tool.name', value: { stringValue: 'get-weather' } },
      { key: 'mcp.session.id', value: { stringValue: 's-1' } },
      { key: 'duration_ms', value: { intValue: '42' } },
    ];
    expect(normalizeMessage(JSON.stringify({ timeUnixNano: '1759320002789000000', attributes }))).toMatchObject({
      toolName: 'get-weather',
      sessionId: 's-1',
      latencyMs: 42,
      timestamp: new Date(1759320002789),
    });
  });

  it('takes a primitive name as the tool only when the primitive is a tool', () => {
    expect(normalizeMessage('{"primitive":"tool","primitive_name":"list_orders"}').toolName).toBe('list_orders');
    expect(normalizeMessage('{"mcp_primitive_type":"resource","mcp_primitive_name":"file:///a"}').toolName).toBeNull();
    expect(normalizeMessage('{"type":"tool","name":"q"}').toolName).toBe('q');
    expect(normalizeMessage('{"type":"tool_call","name":"q"}').toolName).toBeNull();
  });

  it('reads outcome words from status only when they are in the vocabulary, after decision keys', () => {
    expect(normalizeMessage('{"tool":"t","status":"blocked"}')).toMatchObject({ action: 'deny', actionWord: 'blocked', rawAction: null });
    expect(normalizeMessage('{"tool":"t","status":"active"}')).toMatchObject({ action: null, actionWord: null, rawAction: null });
    expect(normalizeMessage('{"tool":"t","status":200}')).toMatchObject({ action: null, rawAction: null });
    expect(normalizeMessage('{"tool":"t","policy_decision":"deny","status":"success"}')).toMatchObject({ action: 'deny', actionWord: 'deny' });
    expect(normalizeMessage('{"tool":"t","policy_decision":"n/a","status":"error"}')).toMatchObject({ action: 'allow', actionWord: 'error', rawAction: null });
    expect(normalizeMessage('{"tool":"t","success":false}')).toMatchObject({ action: 'allow', actionWord: 'success=false' });
    expect(normalizeMessage('{"tool":"t","mcp_error_code":-32003}')).toMatchObject({ action: 'deny', actionWord: 'mcp_error_code=-32003' });
    expect(normalizeMessage('{"tool":"t","mcp_error_code":-32004}')).toMatchObject({ action: null, actionWord: null });
  });

  it('reads the MCP method only in its own form (not an HTTP method)', () => {
    expect(normalizeMessage('{"method":"POST","tool":"t"}').method).toBeNull();
    expect(normalizeMessage('{"method":"tools/call","params":{"name":"t"}}')).toMatchObject({ method: 'tools/call', toolName: 't' });
    expect(normalizeMessage('{"mcp.method.name":"resources/read"}').method).toBe('resources/read');
  });

  it('does not take a top-level name or id for the tool or server', () => {
    const result = normalizeMessage('{"name":"handler","id":"x1"}');
    expect(result.toolName).toBeNull();
    expect(result.serverId).toBeNull();
  });

  it('takes level and timestamp only from the top level', () => {
    const result = normalizeMessage('{"risk":{"level":"high","time":12}}');
    expect(result.level).toBeNull();
    expect(result.timestamp).toBeNull();
  });

  it('prefers a mapped action word over an unmapped one', () => {
    expect(normalizeMessage('{"action":"tools/call","decision":"blocked"}')).toMatchObject({ action: 'deny', rawAction: null });
    expect(normalizeMessage('{"action":"tools/call","policy":{"verdict":"ok"}}')).toMatchObject({ action: 'allow', rawAction: null });
    expect(normalizeMessage('{"action":"tools/call","decision":"maybe"}')).toMatchObject({ action: null, rawAction: 'tools/call' });
  });

  it('ignores an action given as an object', () => {
    expect(normalizeMessage('{"action":{"type":"deny"}}')).toMatchObject({ action: null, rawAction: null });
  });

  it.each([['{"latency_ms":-1}'], ['{"latency_ms":"fast"}'], ['{"latency_ms":null}'], ['{"latency_ms":true}'], ['{"latency_ms":1e308}']])(
    'rejects invalid latency %s',
    (message) => {
      expect(normalizeMessage(message).latencyMs).toBeNull();
    },
  );

  it('skips empty and non-scalar ids', () => {
    const result = normalizeMessage('{"tool":"  ","toolName":true,"tool_name":null,"sessionId":[1],"session_id":"s"}');
    expect(result.toolName).toBeNull();
    expect(result.sessionId).toBe('s');
  });

  it('truncates ids and names to 200 characters', () => {
    const long = 'x'.repeat(1000);
    const result = normalizeMessage(JSON.stringify({ tool: long, server: long, session_id: long, trace_id: long, request_id: long, action: long }));
    expect(result.toolName).toHaveLength(200);
    expect(result.serverId).toHaveLength(200);
    expect(result.sessionId).toHaveLength(200);
    expect(result.traceId).toHaveLength(200);
    expect(result.requestId).toHaveLength(200);
    expect(result.rawAction).toHaveLength(200);
  });

  it('parses JSON surrounded by whitespace and a trailing newline', () => {
    expect(normalizeMessage('  {"tool":"x"}\n').format).toBe('json');
  });

  it('treats invalid JSON and non-object JSON as text', () => {
    expect(normalizeMessage('{"tool":"x"').format).toBe('text');
    expect(normalizeMessage('[{"tool":"x"}]').format).toBe('text');
    expect(normalizeMessage('"tool"').format).toBe('text');
    expect(normalizeMessage('{not json}').format).toBe('text');
  });

  it('reads JSON or logfmt held in a message string', () => {
    expect(normalizeMessage('{"level":"INFO","message":"{\\"tool\\":\\"search\\",\\"action\\":\\"allow\\"}"}')).toMatchObject({
      toolName: 'search',
      action: 'allow',
      level: 'INFO',
      format: 'json',
    });
    expect(normalizeMessage('{"level":30,"time":1714557600000,"msg":"tool=search decision=blocked latency_ms=5"}')).toMatchObject({
      toolName: 'search',
      action: 'deny',
      latencyMs: 5,
      level: 'INFO',
    });
  });
});

describe('normalizeMessage with Lambda JSON logs', () => {
  it('reads a Node.js text-format line with a JSON body', () => {
    const line = `2024-05-01T10:00:00.000Z\t${REQUEST_ID}\tINFO\t{"tool":"search","action":"allowed","latency_ms":12.6,"server_id":"github","session_id":"sess-9"}\n`;
    expect(normalizeMessage(line)).toEqual({
      toolName: 'search',
      action: 'allow',
      rawAction: null,
      actionWord: 'allowed',
      serverId: 'github',
      sessionId: 'sess-9',
      latencyMs: 13,
      traceId: null,
      requestId: REQUEST_ID,
      toolCallId: null,
      method: null,
      level: 'INFO',
      format: 'json',
      fields: { tool: 'search', action: 'allowed', latency_ms: 12.6, server_id: 'github', session_id: 'sess-9' },
      timestamp: new Date('2024-05-01T10:00:00.000Z'),
    });
  });

  it('lets the Lambda prefix win for request id, level and time', () => {
    const line = `2024-05-01T10:00:00.000Z\t${REQUEST_ID}\tERROR\t{"requestId":"app-1","level":"debug","timestamp":"2020-01-01T00:00:00Z","tool":"x"}`;
    expect(normalizeMessage(line)).toMatchObject({ requestId: REQUEST_ID, level: 'ERROR', timestamp: new Date('2024-05-01T10:00:00.000Z') });
  });

  it('reads a Node.js JSON-format log (advanced logging controls)', () => {
    const line = JSON.stringify({
      timestamp: '2024-05-01T10:00:00.123Z',
      level: 'INFO',
      requestId: REQUEST_ID,
      message: { event: 'tool_call', tool: { name: 'search' }, server: { id: 'srv-1', name: 'github' }, decision: 'deny', durationMs: 87 },
    });
    expect(normalizeMessage(line)).toMatchObject({
      toolName: 'search',
      action: 'deny',
      serverId: 'srv-1',
      latencyMs: 87,
      requestId: REQUEST_ID,
      level: 'INFO',
      format: 'json',
      timestamp: new Date('2024-05-01T10:00:00.123Z'),
    });
  });

  it('reads a Python JSON-format log with extra fields', () => {
    const line =
      '{"timestamp": "2024-05-01T10:00:00Z", "level": "INFO", "message": "tool call", "logger": "root", ' +
      `"requestId": "${REQUEST_ID}", "tool_name": "fetch_url", "verdict": "redacted", "latency_ms": 230, "mcp_server": "web"}`;
    expect(normalizeMessage(line)).toMatchObject({
      toolName: 'fetch_url',
      action: 'redact',
      serverId: 'web',
      latencyMs: 230,
      requestId: REQUEST_ID,
      level: 'INFO',
      timestamp: new Date('2024-05-01T10:00:00Z'),
    });
  });

  it('reads a Powertools for AWS Lambda (Python) structured log', () => {
    const line = JSON.stringify({
      level: 'WARNING',
      location: 'handler:42',
      message: 'tool call blocked',
      timestamp: '2024-05-01 10:00:00,123+0000',
      service: 'agent-gw',
      cold_start: false,
      function_name: 'agent-gw',
      function_request_id: REQUEST_ID,
      xray_trace_id: '1-5759e988-bd862e3fe1be46a994272793',
      tool: 'shell',
      outcome: 'blocked',
    });
    expect(normalizeMessage(line)).toMatchObject({
      toolName: 'shell',
      action: 'deny',
      requestId: REQUEST_ID,
      traceId: '1-5759e988-bd862e3fe1be46a994272793',
      level: 'WARNING',
      timestamp: new Date('2024-05-01T10:00:00.123Z'),
    });
  });

  it('reads a Python text-format line with a JSON body', () => {
    const line = `[WARNING]\t2024-05-01T10:00:00.250Z\t${REQUEST_ID}\t{"tool": "shell", "action": "flagged"}`;
    expect(normalizeMessage(line)).toMatchObject({
      toolName: 'shell',
      action: 'flag',
      requestId: REQUEST_ID,
      level: 'WARNING',
      format: 'json',
      timestamp: new Date('2024-05-01T10:00:00.250Z'),
    });
  });

  it('reads an old Node.js line without a level', () => {
    const line = `2024-05-01T10:00:00.000Z\t${REQUEST_ID}\t{"tool":"x"}`;
    expect(normalizeMessage(line)).toMatchObject({ toolName: 'x', requestId: REQUEST_ID, level: null, format: 'json' });
  });

  it('drops an "undefined" request id (logged during init)', () => {
    const line = '2024-05-01T10:00:00.000Z\tundefined\tERROR\tUncaught Exception {"errorType":"Error"}';
    expect(normalizeMessage(line)).toMatchObject({ requestId: null, level: 'ERROR', format: 'text' });
  });

  it('reads logfmt after a Lambda prefix', () => {
    const line = `2024-05-01T10:00:00.000Z\t${REQUEST_ID}\tINFO\ttool=search action=deny latency_ms=3`;
    expect(normalizeMessage(line)).toMatchObject({ toolName: 'search', action: 'deny', latencyMs: 3, requestId: REQUEST_ID, format: 'logfmt' });
  });
});

describe('big integer ids', () => {
  it('keeps a nested dd.trace_id above 2^53 exactly', () => {
    const result = normalizeMessage('{"tool":"search","dd":{"trace_id":1234567890123456789,"span_id":9876543210987654321}}');
    expect(result.traceId).toBe('1234567890123456789');
  });

  it('keeps a dotted dd.trace_id exactly', () => {
    expect(normalizeMessage('{"dd.trace_id": 18446744073709551615}').traceId).toBe('18446744073709551615');
  });

  it('picks the digits that match the parsed value when the key repeats', () => {
    const result = normalizeMessage('{"a":{"trace_id":11111111111111111111},"trace_id":12345678901234567891}');
    expect(result.traceId).toBe('12345678901234567891');
  });

  it('keeps small numeric ids as they are', () => {
    expect(normalizeMessage('{"trace_id":42,"request_id":7,"session_id":0}')).toMatchObject({ traceId: '42', requestId: '7', sessionId: '0' });
  });

  it('keeps a big integer session id exactly', () => {
    expect(normalizeMessage('{"session_id":90071992547409931}').sessionId).toBe('90071992547409931');
  });

  it('keeps a big integer id inside an embedded JSON message exactly', () => {
    expect(normalizeMessage(JSON.stringify({ message: '{"dd":{"trace_id":1234567890123456789}}' })).traceId).toBe('1234567890123456789');
  });
});

describe('trace id precedence', () => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const xray = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';

  it('explicit > traceparent > X-Ray', () => {
    expect(normalizeMessage(JSON.stringify({ xray, traceparent, trace_id: 'explicit' })).traceId).toBe('explicit');
    expect(normalizeMessage(JSON.stringify({ xray, traceparent })).traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(normalizeMessage(JSON.stringify({ xray })).traceId).toBe('1-5759e988-bd862e3fe1be46a994272793');
  });

  it('prefers an explicit trace id nested deeper over a top-level traceparent', () => {
    expect(normalizeMessage(JSON.stringify({ traceparent, dd: { trace_id: '77' } })).traceId).toBe('77');
  });

  it('ignores an invalid traceparent', () => {
    expect(normalizeMessage(JSON.stringify({ traceparent: 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' })).traceId).toBeNull();
    expect(normalizeMessage(JSON.stringify({ traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' })).traceId).toBeNull();
    expect(normalizeMessage(JSON.stringify({ traceparent: 'garbage' })).traceId).toBeNull();
  });
});

describe('hostile JSON', () => {
  it('keeps __proto__ and constructor keys as plain data and pollutes nothing', () => {
    const result = normalizeMessage('{"__proto__":{"polluted":true,"tool":"evil"},"constructor":{"prototype":{"polluted":true}},"tool":"ok"}');
    expect(result.toolName).toBe('ok');
    expect(Object.prototype.hasOwnProperty.call(result.fields, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(result.fields)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('does not read inherited properties as fields', () => {
    expect(normalizeMessage('{"a":1}')).toMatchObject({ toolName: null, serverId: null, sessionId: null });
    expect(normalizeMessage('{"tool":{"x":1}}').toolName).toBeNull();
  });

  it('survives very deep nesting and bounds the copied fields', () => {
    const depth = 50_000;
    const message = '{"a":'.repeat(depth) + '{"tool":"x"}' + '}'.repeat(depth);
    const result = normalizeMessage(message);
    expect(result.toolName).toBeNull();
    expect(['json', 'text']).toContain(result.format);
    let node: unknown = result.fields;
    let levels = 0;
    while (node && typeof node === 'object') {
      node = (node as Record<string, unknown>).a;
      levels++;
    }
    expect(levels).toBeLessThanOrEqual(17);
    expect(() => JSON.stringify(result)).not.toThrow();
  });

  it('bounds the number of values copied into fields', () => {
    const message = JSON.stringify({ tool: 'x', items: Array.from({ length: 50_000 }, (_, i) => i) });
    const result = normalizeMessage(message);
    expect(result.toolName).toBe('x');
    expect((result.fields.items as unknown[]).length).toBeLessThan(10_001);
    expect((result.fields.items as unknown[]).at(-1)).toBe('[truncated]');
  });

  it('finds the tool of a wide object (50,000 keys) at its end', () => {
    const wide: Record<string, unknown> = {};
    for (let i = 0; i < 50_000; i++) wide[`k${i}`] = { v: i };
    wide.tool = 'last';
    const result = normalizeMessage(JSON.stringify(wide));
    expect(result.toolName).toBe('last');
  });
});
