// Tests of the Docker MCP Gateway call lines, Go durations, and the request-id and status spellings in text lines.
import { describe, expect, it } from 'vitest';
import { goDurationMs, parseDockerGatewayLine } from '../../../src/ingest/normalize/gateway-lines.js';
import { normalizeMessage } from '../../../src/ingest/normalize/index.js';

describe('goDurationMs', () => {
  it.each([
    ['312.456ms', 312],
    ['1.2s', 1200],
    ['2m3.5s', 123_500],
    ['1h', 3_600_000],
    ['850µs', 1],
    ['850us', 1],
    ['400ns', 0],
  ])('%s is %d ms', (text, ms) => {
    expect(goDurationMs(text)).toBe(ms);
  });

  it('refuses a duration past the latency column', () => {
    expect(goDurationMs('9999999h')).toBeNull();
  });
});

describe('parseDockerGatewayLine', () => {
  it('reads an outcome line as the call and a start line as fields only', () => {
    expect(parseDockerGatewayLine('  > Tool get_me responded in 1.5ms: status=ok content=[<no content>]')?.hints).toMatchObject({ toolName: 'get_me', latencyMs: 2, action: 'allow', actionWord: 'ok' });
    expect(parseDockerGatewayLine('  ! Tool x failed after 3s: boom')?.hints).toMatchObject({ toolName: 'x', latencyMs: 3000, action: 'allow', actionWord: 'failed' });
    const start = parseDockerGatewayLine('  - Calling tool get_me with arguments: {}');
    expect(start?.hints.toolName).toBeNull();
    expect(start?.fields).toEqual({ gateway: 'docker-mcp', event: 'tool_call_start', tool: 'get_me' });
  });

  it('leaves other lines alone', () => {
    for (const line of ['Tool x responded in 1ms', 'Calling tool x', '- Calling tool', '> Tool x responded in soon: ok', '']) expect(parseDockerGatewayLine(line), line).toBeNull();
  });

  it('is read after JSON: a JSON line quoting a gateway line stays JSON', () => {
    expect(normalizeMessage(JSON.stringify({ msg: '  > Tool a responded in 1ms: status=ok', tool: 'b' }))).toMatchObject({ format: 'json', toolName: 'b' });
  });
});

describe('text lines', () => {
  it('take Powertools and Lambda request id spellings', () => {
    expect(normalizeMessage('function_request_id=abc-123 tool=x').requestId).toBe('abc-123');
    expect(normalizeMessage('payment collected lambda_request_id: 52fdfc07-2182').requestId).toBe('52fdfc07-2182');
  });

  it('take status= only when its word is in the vocabulary, and keep the word', () => {
    expect(normalizeMessage('tool: fetch status: blocked')).toMatchObject({ action: 'deny', actionWord: 'blocked', rawAction: null });
    expect(normalizeMessage('tool: fetch status: 503')).toMatchObject({ action: null, actionWord: null, rawAction: null });
    expect(normalizeMessage('tool: fetch outcome: pending status: ok')).toMatchObject({ action: 'allow', actionWord: 'ok' });
  });
});

describe('JSON request id spellings of Powertools for AWS Lambda', () => {
  it.each(['function_request_id', 'functionRequestId', 'FunctionRequestId', 'lambda_request_id'])('%s is the request id, and the trace id without an X-Ray id', (key) => {
    expect(normalizeMessage(JSON.stringify({ level: 'INFO', message: 'm', [key]: 'req-1' }))).toMatchObject({ requestId: 'req-1', traceId: null });
  });

  it('an X-Ray id (also .NET Pascal case) is the trace id', () => {
    expect(normalizeMessage(JSON.stringify({ FunctionRequestId: 'req-1', XrayTraceId: '1-5759e988-bd862e3fe1be46a994272793' }))).toMatchObject({ requestId: 'req-1', traceId: '1-5759e988-bd862e3fe1be46a994272793' });
  });
});
