// The word-based heuristics against every held-out fixture with an expected file: what they find is right, and they find most of it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { durationInText, findInRecord, findInText, keyRole, keyWords, leadingTimestamp } from '../../../src/ingest/recognition/index.js';

const DIR = path.resolve(import.meta.dirname, '../../fixtures/gateways');
const FIELDS = ['toolName', 'action', 'actionWord', 'serverId', 'sessionId', 'latencyMs', 'timestamp', 'traceId', 'method'] as const;

describe('key words', () => {
  it('splits on separators and camelCase', () => {
    expect(keyWords('ai.toolCall.name')).toEqual(['ai', 'tool', 'call', 'name']);
    expect(keyWords('TimeGenerated')).toEqual(['time', 'generated']);
    expect(keyWords('mcp-server_ID')).toEqual(['mcp', 'server', 'id']);
    expect(keyWords('HTTPServer.requestID')).toEqual(['http', 'server', 'request', 'id']);
  });
  it('splits as the three regular expressions it replaced do, for any key', () => {
    const byExpressions = (key: string) =>
      key
        .slice(0, 200)
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
        .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
        .split(/[\s._\-/:@$]+/)
        .filter(Boolean)
        .map((w) => w.toLowerCase());
    const chars = fc.constantFrom(...'aAbBzZ09 ._-/:@$\t\u00a0\u2028é\u00c9\ud83d\ude00İ'.split(''));
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: chars, maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }), fc.string({ unit: chars, minLength: 195, maxLength: 210 })), (key) => {
        expect(keyWords(key)).toEqual(byExpressions(key));
      }),
      { numRuns: 5000 },
    );
  });
  it('reads roles from words, not spellings', () => {
    expect(['tool_name', 'toolName', 'ToolName', 'mcp.tool.name', 'function_name', 'mcp_tool_name'].map(keyRole)).toEqual(Array(6).fill('tool'));
    expect(['target_name', 'upstreamServer', 'mcp_server', 'provider-id'].map(keyRole)).toEqual(Array(4).fill('server'));
    expect(['conversation_id', 'threadId', 'SessionId', 'mcp.session.id'].map(keyRole)).toEqual(Array(4).fill('session'));
    expect(['integrationLatency', 'duration_ms', 'elapsedSeconds'].map(keyRole)).toEqual(Array(3).fill('latency'));
  });
  it('reads a leading time and durations with units', () => {
    expect(leadingTimestamp('[2016-04-15T20:17:00.310Z] "POST /mcp"')?.toISOString()).toBe('2016-04-15T20:17:00.310Z');
    expect(leadingTimestamp('2026-01-01 10:00:00,123 - x')?.toISOString()).toBe('2026-01-01T10:00:00.123Z');
    expect(leadingTimestamp('01/Jan/2026:10:00:00 +0100 GET')?.toISOString()).toBe('2026-01-01T09:00:00.000Z');
    expect(durationInText('Tool search responded in 69ms: status=ok')).toBe(69);
    expect(durationInText('took 1.5s')).toBe(1500);
    expect(durationInText('HTTP/2 204 - 154 0 226')).toBeNull();
  });
});

describe('held-out formats', () => {
  const files = readdirSync(DIR).filter((f) => f.endsWith('.expected.json'));
  let expected = 0;
  let found = 0;

  it.each(files)('%s: every field found matches the expected value', (file) => {
    const spec = JSON.parse(readFileSync(path.join(DIR, file), 'utf8')) as { fixture: string; items: Record<string, unknown>[] };
    const lines = readFileSync(path.join(DIR, spec.fixture), 'utf8').split('\n').filter((l) => l.trim());
    for (const item of spec.items) {
      const line = lines[(item.line as number) - 1];
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(line);
      } catch {
        parsed = null;
      }
      const f = parsed && typeof parsed === 'object' ? findInRecord(parsed as Record<string, unknown>) : findInText(line);
      const got: Record<string, unknown> = { ...f, timestamp: f.timestamp?.toISOString() ?? null };
      for (const field of FIELDS) {
        if (item[field] === null || item[field] === undefined) continue;
        expected++;
        if (got[field] === item[field]) found++;
        // A field found must be the right one (a miss is allowed, a wrong value is not).
        if (got[field] !== null) expect({ file, line: item.line, field, value: got[field] }).toEqual({ file, line: item.line, field, value: item[field] });
      }
    }
  });

  it('finds at least 85 % of the expected fields', () => {
    expect(expected).toBeGreaterThan(50);
    expect(found / expected).toBeGreaterThanOrEqual(0.85);
  });
});
