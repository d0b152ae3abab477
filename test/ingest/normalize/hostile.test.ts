// Tests that hostile inputs (huge, deeply nested, regex-unfriendly) are handled quickly and without throwing.
import { describe, it, expect } from 'vitest';
import { normalizeDatadog, normalizeMessage, parseDatadogTags, parseLogfmt, parseTimestamp } from '../../../src/ingest/normalize/index.js';

const MB = 1_000_000;

const inputs: Array<[string, () => string]> = [
  ['a key followed by a megabyte of spaces', () => 'tool' + ' '.repeat(MB) + 'x'],
  ['repeated keys without values', () => 'tool:'.repeat(MB / 5)],
  ['a megabyte of quotes', () => '"'.repeat(MB)],
  ['a megabyte of a= tokens', () => 'a='.repeat(MB / 2)],
  ['a megabyte of hex', () => 'a'.repeat(MB)],
  ['hex and dashes', () => '0-'.repeat(MB / 2)],
  ['a REPORT line with many tokens', () => 'REPORT RequestId: ' + 'x '.repeat(MB / 2)],
  ['a START line with long space and word runs', () => 'START RequestId:' + ' '.repeat(30_000) + 'x'.repeat(30_000) + ' '.repeat(30_000)],
  ['unterminated JSON', () => '{' + '"a":'.repeat(MB / 4) + '}'],
  ['deeply nested JSON arrays', () => '{"a":' + '['.repeat(MB / 4) + ']'.repeat(MB / 4) + '}'],
  ['many code fences', () => '```' + '\n```x'.repeat(MB / 5)],
  ['many big integer trace ids', () => '{' + Array.from({ length: 20_000 }, (_, i) => `"trace_id${i % 2 ? '' : i}":1234567890123456789${i % 10}`).join(',') + '}'],
  ['a megabyte of backslashes in a quoted value', () => 'a="' + '\\'.repeat(MB) + '"'],
  ['a Lambda prefix start and a megabyte of text', () => '2024-05-01T10:00:00.000Z\t' + 'x'.repeat(MB)],
  ['a trace_id with a megabyte value', () => 'trace_id=' + 'a'.repeat(MB)],
  ['repeated trace_id keys', () => 'trace_id'.repeat(MB / 8)],
  ['repeated Root= prefixes', () => 'Root=1-'.repeat(MB / 7)],
  ['ten megabytes of text', () => 'word '.repeat(2 * MB)],
  ['many message strings with JSON', () => JSON.stringify(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, { message: '{"a":'.repeat(1000) }])))],
];

describe('hostile input', () => {
  it.each(inputs)('handles %s quickly', (_name, make) => {
    const input = make();
    const started = Date.now();
    expect(() => {
      normalizeMessage(input);
      normalizeDatadog({ title: input, body: `%%%\n${input}\n%%%`, tags: input });
      parseDatadogTags(input);
      parseLogfmt(input);
      parseTimestamp(input);
    }).not.toThrow();
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
