// Tests of Lambda platform lines (START/END/REPORT...) and runtime prefixes.
import { describe, it, expect } from 'vitest';
import { normalizeMessage } from '../../../src/ingest/normalize/index.js';
import { parseLambdaPlatformLine, splitLambdaPrefix } from '../../../src/ingest/normalize/lambda.js';

const ID = 'c6af9ac6-7b61-11e6-9a41-93e812345678';

describe('Lambda platform lines', () => {
  it('reads a REPORT line with Init Duration and XRAY', () => {
    const line =
      `REPORT RequestId: ${ID}\tDuration: 12.34 ms\tBilled Duration: 13 ms\tMemory Size: 128 MB\tMax Memory Used: 70 MB\t` +
      'Init Duration: 150.12 ms\t\nXRAY TraceId: 1-5e8a1b2c-0123456789abcdef01234567\tSegmentId: 0123456789abcdef\tSampled: true\t\n';
    expect(normalizeMessage(line)).toEqual({
      toolName: null,
      action: null,
      rawAction: null,
      actionWord: null,
      serverId: null,
      sessionId: null,
      latencyMs: 12,
      traceId: '1-5e8a1b2c-0123456789abcdef01234567',
      requestId: ID,
      toolCallId: null,
      method: null,
      level: null,
      format: 'lambda-platform',
      fields: {
        event: 'REPORT',
        requestId: ID,
        durationMs: 12.34,
        billedDurationMs: 13,
        memorySizeMb: 128,
        maxMemoryUsedMb: 70,
        initDurationMs: 150.12,
        xrayTraceId: '1-5e8a1b2c-0123456789abcdef01234567',
        segmentId: '0123456789abcdef',
        sampled: true,
      },
      timestamp: null,
    });
  });

  it('rounds the REPORT duration', () => {
    const line = `REPORT RequestId: ${ID}\tDuration: 1.50 ms\tBilled Duration: 2 ms\tMemory Size: 128 MB\tMax Memory Used: 64 MB\t`;
    expect(normalizeMessage(line).latencyMs).toBe(2);
  });

  it('reads a timed-out REPORT line', () => {
    const line = `REPORT RequestId: ${ID}\tDuration: 3000.00 ms\tBilled Duration: 3000 ms\tMemory Size: 128 MB\tMax Memory Used: 60 MB\tStatus: timeout`;
    expect(normalizeMessage(line)).toMatchObject({ latencyMs: 3000, fields: { status: 'timeout', durationMs: 3000 } });
  });

  it('reads a START line', () => {
    expect(normalizeMessage(`START RequestId: ${ID} Version: $LATEST\n`)).toMatchObject({
      requestId: ID,
      latencyMs: null,
      format: 'lambda-platform',
      fields: { event: 'START', requestId: ID, version: '$LATEST' },
    });
  });

  it('reads an END line', () => {
    expect(normalizeMessage(`END RequestId: ${ID}\n`)).toMatchObject({ requestId: ID, format: 'lambda-platform', fields: { event: 'END' } });
  });

  it('reads an INIT_START line', () => {
    const line = 'INIT_START Runtime Version: nodejs:20.v13\tRuntime Version ARN: arn:aws:lambda:us-east-1::runtime:0123abcd\n';
    expect(normalizeMessage(line)).toMatchObject({
      format: 'lambda-platform',
      requestId: null,
      fields: { event: 'INIT_START', runtimeVersion: 'nodejs:20.v13', runtimeVersionArn: 'arn:aws:lambda:us-east-1::runtime:0123abcd' },
    });
  });

  it.each([
    ['START of something'],
    ['END'],
    ['REPORT Duration: 12 ms'],
    ['STARTRequestId: x'],
    ['Report RequestId: x'],
  ])('does not take %j for a platform line', (line) => {
    expect(normalizeMessage(line).format).not.toBe('lambda-platform');
  });

  it('gives null for other lines', () => {
    expect(parseLambdaPlatformLine('{"tool":"x"}')).toBeNull();
  });
});

describe('Lambda runtime prefixes', () => {
  it.each([
    [`2024-05-01T10:00:00.000Z\t${ID}\tINFO\thello`, ID, 'INFO', 'hello'],
    [`2024-05-01T10:00:00.000Z\t${ID}\tWARN\t`, ID, 'WARN', ''],
    [`2024-05-01T10:00:00.000Z\t${ID}\thello\tworld`, ID, null, 'hello\tworld'],
    [`[ERROR]\t2024-05-01T10:00:00.000Z\t${ID}\tboom`, ID, 'ERROR', 'boom'],
    [`[INFO]\t2024-05-01T10:00:00.000Z\tNone\tinit`, null, 'INFO', 'init'],
  ])('splits %j', (line, requestId, level, body) => {
    expect(splitLambdaPrefix(line)).toEqual({ timestamp: new Date('2024-05-01T10:00:00.000Z'), requestId, level, body });
  });

  it.each([['hello'], ['2024-05-01T10:00:00.000Z hello'], ['2024-05-01 10:00:00\tx\tINFO\ty'], ['[INFO] 2024-05-01T10:00:00.000Z x y']])(
    'finds no prefix in %j',
    (line) => {
      expect(splitLambdaPrefix(line)).toBeNull();
    },
  );

  it('reads text after a prefix with its hints', () => {
    const line = `2024-05-01T10:00:00.000Z\t${ID}\tERROR\tInvoke Error {"errorType":"Error","errorMessage":"tool: shell was denied"}`;
    expect(normalizeMessage(line)).toMatchObject({ format: 'text', level: 'ERROR', requestId: ID, toolName: 'shell' });
  });
});
