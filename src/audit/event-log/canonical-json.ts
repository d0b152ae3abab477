// RFC 8785 (JSON Canonicalization Scheme) text of a JSON value, fast: JSON.stringify (numbers and strings as RFC 8785
// requires: ECMAScript's serialization) of a copy whose objects hold their keys in sorted order, copying only the
// objects that are not sorted already. The same text as the `canonicalize` package for every JSON value.
import canonicalize from 'canonicalize';
import { setOwn } from '../../shared/own-keys.js';

/** Thrown inside the copy when a value needs another serializer: a toJSON (a Date), or integer-like keys. */
const NEEDS_PACKAGE = Symbol('needs the canonicalize package');
const NEEDS_WALK = Symbol('needs the member-by-member walk');

/** The text of `value`, JSON's reading of it when JSON cannot carry a value (NaN, Infinity: null), as canonicalBytes does. */
export function canonicalJson(value: unknown): string {
  try {
    return JSON.stringify(sortedCopy(value)) ?? slow(value);
  } catch (err) {
    if (err === NEEDS_WALK) return walkText(value);
    if (err === NEEDS_PACKAGE) return slow(value);
    throw err;
  }
}

/** An array index as a property key ("0", "17"): objects enumerate those first, in numeric order, whatever was set. */
function isIndexKey(k: string): boolean {
  const c = k.charCodeAt(0);
  return c >= 48 && c <= 57 && /^(?:0|[1-9]\d{0,9})$/.test(k) && Number(k) < 2 ** 32 - 1;
}

/** `v` with every object's keys in UTF-16 code unit order; objects and arrays already so are kept, not copied. */
function sortedCopy(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') throw NEEDS_PACKAGE;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    for (let i = 0; i < v.length; i++) {
      const c = sortedCopy(v[i]);
      if (c !== v[i]) (out ??= v.slice())[i] = c;
    }
    return out ?? v;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  // Index keys come first whatever the order they were set in, so a copy cannot hold them sorted as text.
  if (keys.length > 1 && isIndexKey(keys[0])) throw NEEDS_WALK;
  let changed = false;
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1] > keys[i]) {
      keys.sort();
      changed = true;
      break;
    }
  }
  const values = new Array<unknown>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const was = o[keys[i]];
    const c = sortedCopy(was);
    if (c !== was) changed = true;
    values[i] = c;
  }
  if (!changed) return v;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < keys.length; i++) setOwn(out, keys[i], values[i]);
  return out;
}

/** The member-by-member serializer, for values holding objects with index keys. */
function walkText(v: unknown): string {
  const text = walk(v);
  return text === undefined ? slow(v) : text;
}

function walk(v: unknown): string | undefined {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return slow(v);
  if (Array.isArray(v)) {
    const parts = new Array<string>(v.length);
    for (let i = 0; i < v.length; i++) parts[i] = walk(v[i]) ?? 'null';
    return `[${parts.join(',')}]`;
  }
  const parts: string[] = [];
  for (const k of Object.keys(v).sort()) {
    const text = walk((v as Record<string, unknown>)[k]);
    if (text !== undefined) parts.push(`${JSON.stringify(k)}:${text}`);
  }
  return `{${parts.join(',')}}`;
}

function slow(value: unknown): string {
  try {
    return canonicalize(value)!;
  } catch {
    return canonicalize(JSON.parse(JSON.stringify(value)))!;
  }
}
