// RFC 8785 (JSON Canonicalization Scheme) text of a JSON value, fast: one walk writing each object's members in sorted
// key order, numbers and strings as JSON.stringify writes them (ECMAScript's serialization, which RFC 8785 requires).
// The same text as the `canonicalize` package for every JSON value; a value with toJSON (a Date) is that package's.
import canonicalize from 'canonicalize';

/** Thrown inside the walk when a value needs the package (toJSON). */
const NEEDS_PACKAGE = Symbol('needs the walk-based serializer');

/** The text of `value`, JSON's reading of it when JSON cannot carry a value (NaN, Infinity: null), as canonicalBytes does. */
export function canonicalJson(value: unknown): string {
  try {
    return write(value) ?? slow(value);
  } catch (err) {
    if (err === NEEDS_PACKAGE) return slow(value);
    throw err;
  }
}

/** Object keys in UTF-16 code unit order (sorted only when they are not already). */
function sortedKeys(o: object): string[] {
  const keys = Object.keys(o);
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1] > keys[i]) return keys.sort();
  }
  return keys;
}

/** The text of a value, or undefined for one an object leaves out (undefined, a function, a symbol). */
function write(v: unknown): string | undefined {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(v);
    case 'object':
      break;
    case 'bigint':
      // JSON has no such number: the same TypeError JSON.stringify and the package throw.
      return JSON.stringify(v);
    default:
      return undefined;
  }
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') throw NEEDS_PACKAGE;
  if (Array.isArray(v)) {
    let s = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) s += ',';
      s += write(v[i]) ?? 'null';
    }
    return s + ']';
  }
  let s = '{';
  for (const k of sortedKeys(v)) {
    const text = write((v as Record<string, unknown>)[k]);
    if (text === undefined) continue;
    s += s.length === 1 ? `${JSON.stringify(k)}:${text}` : `,${JSON.stringify(k)}:${text}`;
  }
  return s + '}';
}

function slow(value: unknown): string {
  try {
    return canonicalize(value)!;
  } catch {
    return canonicalize(JSON.parse(JSON.stringify(value)))!;
  }
}
