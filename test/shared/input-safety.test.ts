// Unit tests of the input-safety module: storable text (NUL, lone surrogates), nesting limits, isObject.
import { describe, expect, it } from 'vitest';
import {
  MAX_BODY_DEPTH,
  MAX_METADATA_DEPTH,
  MAX_STORED_DEPTH,
  TooDeep,
  isObject,
  nestsDeeper,
  storable,
  storableText,
  textNestsDeeper,
} from '../../src/shared/input-safety.js';
import { InvalidInput } from '../../src/shared/domain-errors.js';

/** An object nested `depth` levels deep: {a:{a:...{a:leaf}}}. */
const nest = (depth: number, leaf: unknown = 1): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

describe('limits', () => {
  it('keeps each place its depth: body text 64, raw metadata 32, stored values 64', () => {
    expect([MAX_BODY_DEPTH, MAX_METADATA_DEPTH, MAX_STORED_DEPTH]).toEqual([64, 32, 64]);
  });
});

describe('storableText', () => {
  it('replaces NUL with U+FFFD', () => {
    expect(storableText('a\u0000b\u0000')).toBe('a\uFFFDb\uFFFD');
  });
  it('replaces lone high and low surrogates and keeps pairs', () => {
    expect(storableText('x\ud800y\udc00z\ud83d\ude00')).toBe('x\uFFFDy\uFFFDz\ud83d\ude00');
    expect(storableText('\ud83d')).toBe('\uFFFD');
  });
  it('leaves clean text untouched', () => {
    expect(storableText('plain ✓')).toBe('plain ✓');
  });
});

describe('storable', () => {
  it('returns the same value when nothing needs changing', () => {
    const v = { a: ['x', 1, null, { b: true }], d: new Date(0) };
    expect(storable(v)).toBe(v);
  });
  it('scrubs strings and keys everywhere, copying instead of changing the input', () => {
    const v = { 'k\u0000': ['v\u0000', { lone: '\udc00' }], ok: 'fine' };
    const out = storable(v);
    expect(out).toEqual({ 'k\uFFFD': ['v\uFFFD', { lone: '\uFFFD' }], ok: 'fine' });
    expect(v['k\u0000'][0]).toBe('v\u0000');
  });
  it('keeps a "__proto__" key as plain data', () => {
    const v = JSON.parse('{"__proto__":{"polluted":"\\u0000"}}') as Record<string, unknown>;
    const out = storable(v) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
  it('accepts values up to the stored depth and refuses deeper ones with a domain error', () => {
    expect(() => storable(nest(MAX_STORED_DEPTH))).not.toThrow();
    expect(() => storable(nest(MAX_STORED_DEPTH + 1))).toThrow(TooDeep);
    expect(() => storable(nest(MAX_STORED_DEPTH + 1))).toThrow(InvalidInput);
    expect(() => storable(nest(5), 4)).toThrow(`nests deeper than 4 levels`);
  });
  it('refuses hostile depth without exhausting the stack', () => {
    expect(() => storable(nest(100_000))).toThrow(TooDeep);
  });
});

describe('nestsDeeper', () => {
  it('counts levels of objects and arrays', () => {
    expect(nestsDeeper(nest(MAX_METADATA_DEPTH), MAX_METADATA_DEPTH)).toBe(false);
    expect(nestsDeeper(nest(MAX_METADATA_DEPTH + 1), MAX_METADATA_DEPTH)).toBe(true);
    expect(nestsDeeper([[[1]]], 2)).toBe(true);
    expect(nestsDeeper('text', 0)).toBe(false);
  });
  it('never recurses, whatever the depth', () => {
    expect(nestsDeeper(nest(200_000), MAX_METADATA_DEPTH)).toBe(true);
  });
});

describe('textNestsDeeper', () => {
  it('judges JSON text before it is parsed, skipping brackets inside strings', () => {
    expect(textNestsDeeper('['.repeat(MAX_BODY_DEPTH) + ']'.repeat(MAX_BODY_DEPTH), MAX_BODY_DEPTH)).toBe(false);
    expect(textNestsDeeper('['.repeat(MAX_BODY_DEPTH + 1) + ']'.repeat(MAX_BODY_DEPTH + 1), MAX_BODY_DEPTH)).toBe(true);
    expect(textNestsDeeper(`{"a":"${'['.repeat(100)}\\"["}`, 2)).toBe(false);
  });
});

describe('isObject', () => {
  it('is true only for non-null, non-array objects', () => {
    expect(isObject({})).toBe(true);
    expect(isObject(Object.create(null))).toBe(true);
    expect(isObject([])).toBe(false);
    expect(isObject(null)).toBe(false);
    expect(isObject('x')).toBe(false);
    expect(isObject(1)).toBe(false);
    expect(isObject(undefined)).toBe(false);
  });
});
