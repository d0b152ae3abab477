// Tests of plain-text messages: best-effort hints for tools, actions, ids and trace ids.
import { describe, it, expect } from 'vitest';
import { normalizeMessage } from '../../../src/ingest/normalize/index.js';

const UUID = '3b8c0f2e-1b2a-4c3d-9e8f-0a1b2c3d4e5f';

describe('normalizeMessage with plain text', () => {
  it('gives an empty result for plain prose', () => {
    expect(normalizeMessage('hello world')).toEqual({
      toolName: null,
      action: null,
      rawAction: null,
      actionWord: null,
      serverId: null,
      sessionId: null,
      latencyMs: null,
      traceId: null,
      requestId: null,
      toolCallId: null,
      method: null,
      level: null,
      format: 'text',
      fields: {},
      timestamp: null,
    });
  });

  it.each([
    ['Calling tool: search with 3 args', 'toolName', 'search'],
    ['tool=search, then more words here', 'toolName', 'search'],
    ['Tool: "web search" finished', 'toolName', 'web search'],
    ['invoked tool_name: fetch_url.', 'toolName', 'fetch_url'],
    ['policy evaluated, action: denied for the call', 'action', 'deny'],
    ['call finished; decision=ALLOWED and more words', 'action', 'allow'],
    ['connected to server: github-mcp over stdio', 'serverId', 'github-mcp'],
    ['new session_id: s-123 opened by the user', 'sessionId', 's-123'],
    ['the tool call took latency_ms: 42.4 in total', 'latencyMs', 42],
    [`RequestId: ${UUID} Error: Runtime exited with error`, 'requestId', UUID],
    ['request_id="r-9" something happened', 'requestId', 'r-9'],
    ['something failed trace_id=abc123 again', 'traceId', 'abc123'],
    ['something failed dd.trace_id=1234567890123456789 again', 'traceId', '1234567890123456789'],
    ['upstream traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 failed', 'traceId', '4bf92f3577b34da6a3ce929d0e0e4736'],
    ['X-Amzn-Trace-Id: Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1 timed out', 'traceId', '1-5759e988-bd862e3fe1be46a994272793'],
    ['2024-05-01 10:00:00 ERROR the database went away again', 'level', 'ERROR'],
    ['[WARN] the cache is cold right now', 'level', 'WARN'],
    ['the level: debug is set by the operator', 'level', 'DEBUG'],
  ] as const)('finds a hint in %j', (message, field, value) => {
    const result = normalizeMessage(message);
    expect(result.format).toBe('text');
    expect(result[field]).toBe(value);
  });

  it('keeps an unknown action word as rawAction', () => {
    expect(normalizeMessage('the gate said outcome: pending for now')).toMatchObject({ action: null, rawAction: 'pending' });
  });

  it('does not match keys inside longer words', () => {
    expect(normalizeMessage('multitool: hammer and a toolbox: red').toolName).toBeNull();
    expect(normalizeMessage('the reaction: surprise, the transaction: ok').action).toBeNull();
  });

  it("reads a text line's own leading time (not one later in the line) and returns no fields", () => {
    const result = normalizeMessage('2024-05-01T10:00:00Z something happened tool: x');
    expect(result.timestamp?.toISOString()).toBe('2024-05-01T10:00:00.000Z');
    expect(result.fields).toEqual({});
    expect(normalizeMessage('something happened at 2024-05-01T10:00:00Z').timestamp).toBeNull();
  });

  it('reads a duration with a unit anywhere in a text line', () => {
    expect(normalizeMessage('Tool search responded in 69ms: done').latencyMs).toBe(69);
  });

  it('prefers an explicit trace id over traceparent and X-Ray in text', () => {
    const message = 'Root=1-5759e988-bd862e3fe1be46a994272793 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 trace_id=abc';
    expect(normalizeMessage(message).traceId).toBe('abc');
    expect(normalizeMessage('Root=1-5759e988-bd862e3fe1be46a994272793 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 !').traceId).toBe(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
  });

  it('bounds work on huge messages', () => {
    const huge = 'tool: early ' + 'a '.repeat(2_000_000) + 'trace_id=late';
    const started = Date.now();
    const result = normalizeMessage(huge);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result.toolName).toBe('early');
    expect(result.traceId).toBeNull();
  });

  it('copes with NUL characters and lone surrogates', () => {
    const result = normalizeMessage('tool: se\u0000arch \ud800 trace_id=\udfff');
    expect(result.format).toBe('text');
    expect(result.toolName).toBe('se');
  });
});
