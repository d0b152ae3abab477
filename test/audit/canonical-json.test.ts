// The fast RFC 8785 serializer the log hashes with writes exactly what the `canonicalize` package (the verifier's)
// writes, for any JSON value and for values JSON cannot carry; a value with toJSON is the package's own.
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/audit/event-log/canonical-json.js';

const reference = (v: unknown) => {
  try {
    return canonicalize(v);
  } catch {
    return canonicalize(JSON.parse(JSON.stringify(v)));
  }
};

describe('canonical JSON', () => {
  it('equals canonicalize for arbitrary JSON values (unicode keys and strings, numbers, nesting)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (v) => {
        expect(canonicalJson(v)).toBe(reference(v));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.oneof(fc.double(), fc.string({ unit: 'binary' }), fc.constant(undefined), fc.array(fc.anything()))), (v) => {
        expect(canonicalJson(v)).toBe(reference(v));
      }),
      { numRuns: 1000 },
    );
  });

  it('writes an own __proto__ key once, where it is, and never an object\'s prototype (found by the property above)', () => {
    for (const text of ['{"__proto__":[{}]}', '{"__proto__":{"a":1},"b":{"c":{}}}', '[{"__proto__":null},{}]']) {
      const v = JSON.parse(text) as unknown;
      expect(canonicalJson(v)).toBe(reference(v));
      expect(canonicalJson(v)).toBe(text);
    }
  });

  it('writes values JSON cannot carry as JSON reads them, and orders keys by UTF-16 code units', () => {
    const v = { b: NaN, a: [Infinity, undefined, -0], '10': 1, '2': 2, é: { z: 1, y: [{ d: 1, c: 2 }] }, '\u{1F600}': 1, '\uFFFF': 2, u: undefined, date: new Date(0) };
    expect(canonicalJson(v)).toBe(reference(v));
    expect(canonicalJson(v).startsWith('{"10":1,"2":2,"a":[null,null,0],"b":null,')).toBe(true);
  });

  it('writes wide values (many objects holding many distinct keys) and values with toJSON alike', () => {
    const wide = Array.from({ length: 600 }, (_, i) => ({ [`k${i}`]: i, [`j${i}`]: { [`x${i}`]: [i] } }));
    expect(canonicalJson(wide)).toBe(reference(wide));
    const dated = { at: new Date(0), nested: [{ when: new Date(1) }] };
    expect(canonicalJson(dated)).toBe(reference(dated));
  });
});
