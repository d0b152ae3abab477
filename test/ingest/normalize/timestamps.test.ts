// Tests of timestamp parsing: ISO 8601, epoch seconds and milliseconds, garbage and out-of-range values.
import { describe, it, expect } from 'vitest';
import { parseTimestamp } from '../../../src/ingest/normalize/index.js';

describe('parseTimestamp', () => {
  it.each([
    ['2024-05-01T10:00:00.000Z', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T10:00:00.123456Z', '2024-05-01T10:00:00.123Z'],
    ['2024-05-01T10:00:00.123456789Z', '2024-05-01T10:00:00.123Z'],
    ['2024-05-01T10:00:00.5Z', '2024-05-01T10:00:00.500Z'],
    ['2024-05-01T12:00:00+02:00', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T05:30:00-0430', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T10:00:00+00', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01 10:00:00,123+0000', '2024-05-01T10:00:00.123Z'],
    ['2024-05-01t10:00:00z', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T10:00', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01', '2024-05-01T00:00:00.000Z'],
    ['  2024-05-01T10:00:00Z  ', '2024-05-01T10:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
    ['1970-01-01T00:00:00Z', '1970-01-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
    ['1970-01-01T01:00:00+01:00', '1970-01-01T00:00:00.000Z'],
  ])('parses ISO 8601 %j', (input, iso) => {
    expect(parseTimestamp(input)?.toISOString()).toBe(iso);
  });

  it('takes a date-time without zone designator as UTC', () => {
    expect(parseTimestamp('2024-05-01T10:00:00')?.toISOString()).toBe('2024-05-01T10:00:00.000Z');
    expect(parseTimestamp('2024-05-01 10:00:00.250')?.toISOString()).toBe('2024-05-01T10:00:00.250Z');
  });

  it.each([
    [1714557600, '2024-05-01T10:00:00.000Z'],
    [1714557600.123, '2024-05-01T10:00:00.123Z'],
    [1714557600123, '2024-05-01T10:00:00.123Z'],
    [0, '1970-01-01T00:00:00.000Z'],
    [99_999_999_999, '5138-11-16T09:46:39.000Z'],
    [100_000_000_000, '1973-03-03T09:46:40.000Z'],
    [253402300799999, '9999-12-31T23:59:59.999Z'],
  ])('parses epoch number %d (below 1e11 = seconds)', (input, iso) => {
    expect(parseTimestamp(input)?.toISOString()).toBe(iso);
  });

  it.each([
    ['1714557600', '2024-05-01T10:00:00.000Z'],
    ['1714557600.5', '2024-05-01T10:00:00.500Z'],
    ['1714557600123', '2024-05-01T10:00:00.123Z'],
    [' 1714557600123 ', '2024-05-01T10:00:00.123Z'],
    ['1.7145576e9', '2024-05-01T10:00:00.000Z'],
  ])('parses numeric string %j', (input, iso) => {
    expect(parseTimestamp(input)?.toISOString()).toBe(iso);
  });

  it('accepts a Date and a bigint', () => {
    expect(parseTimestamp(new Date('2024-05-01T10:00:00Z'))?.toISOString()).toBe('2024-05-01T10:00:00.000Z');
    expect(parseTimestamp(1714557600123n)?.toISOString()).toBe('2024-05-01T10:00:00.123Z');
  });

  it('returns a new Date each time', () => {
    const original = new Date('2024-05-01T10:00:00Z');
    const parsed = parseTimestamp(original);
    expect(parsed).not.toBe(original);
  });

  it.each([
    [''],
    ['   '],
    ['garbage'],
    ['yesterday'],
    ['May 1, 2024'],
    ['Wed, 01 May 2024 10:00:00 GMT'],
    ['2024-13-01T00:00:00Z'],
    ['2024-02-30T00:00:00Z'],
    ['2023-02-29T00:00:00Z'],
    ['2024-05-01T24:00:00Z'],
    ['2024-05-01T10:60:00Z'],
    ['2024-05-01T10:00:61Z'],
    ['2024-05-01T10:00:00+25:00'],
    ['2024-5-1'],
    ['NaN'],
    ['Infinity'],
    ['0x10'],
    ['1e400'],
    ['12abc'],
    ['1'.repeat(100)],
    ['2024-05-01T10:00:00Z'.padEnd(100, 'Z')],
  ])('rejects garbage %j', (input) => {
    expect(parseTimestamp(input)).toBeNull();
  });

  it.each([
    ['1969-12-31T23:59:59.999Z'],
    ['0001-01-01T00:00:00Z'],
    ['0075-01-01T00:00:00Z'],
    ['1900-01-01T00:00:00Z'],
    ['1970-01-01T00:00:00+01:00'],
    [-1],
    [-1714557600],
    ['-1714557600'],
    [253402300800000],
    [1e15],
    [1714557600123456],
    [Number.MAX_VALUE],
    [-0.5],
  ])('rejects out-of-range %j', (input) => {
    expect(parseTimestamp(input)).toBeNull();
  });

  it.each([[NaN], [Infinity], [-Infinity], [null], [undefined], [true], [{}], [[1714557600]], [new Date('nope')], [-1n], [10n ** 30n], [Symbol('t')]])(
    'rejects non-timestamps %s',
    (input) => {
      expect(parseTimestamp(input)).toBeNull();
    },
  );
});
