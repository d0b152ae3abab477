// RFC 8785 (JSON Canonicalization Scheme) text of a JSON value, fast: JSON.stringify with the sorted list of every key
// the value holds as its property list writes each object's members in sorted order (numbers and strings as RFC 8785
// requires: ECMAScript's serialization). The same text as the `canonicalize` package for every JSON value; past a bound
// on objects x distinct keys (the list is walked per object) it is that package's.
import canonicalize from 'canonicalize';

/** Most (objects x distinct keys) the property list may cost before the walk-based serializer is used instead. */
const MAX_LIST_WORK = 200_000;

/** The text of `value`, JSON's reading of it when JSON cannot carry a value (NaN, Infinity: null), as canonicalBytes does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? slow(value);
  const keys = new Set<string>();
  let objects = 0;
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x);
      return;
    }
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      objects = Infinity;
      return;
    }
    objects++;
    for (const k of Object.keys(v)) {
      keys.add(k);
      walk((v as Record<string, unknown>)[k]);
    }
  };
  walk(value);
  // A listed key is read from every object, own or inherited: `__proto__` (an own key in parsed JSON) would be read
  // from objects without it as their prototype, and written. Such values take the walk-based serializer.
  if (objects * keys.size > MAX_LIST_WORK || keys.has('__proto__')) return slow(value);
  return JSON.stringify(value, [...keys].sort()) ?? slow(value);
}

function slow(value: unknown): string {
  try {
    return canonicalize(value)!;
  } catch {
    return canonicalize(JSON.parse(JSON.stringify(value)))!;
  }
}
