// OTLP attribute values (AnyValue, KeyValue lists) as plain JSON values, bounded in depth and key length like other metadata
// (text Postgres cannot hold is made storable by the write path).
import { jsonStringBytes } from '../../shared/event-cost.js';
import { isObject } from '../../shared/input-safety.js';
import { setOwn } from '../../shared/own-keys.js';

/** Deepest nesting of array/kvlist values kept; deeper values are replaced by a marker string. */
export const MAX_ATTRIBUTE_DEPTH = 32;
/** Longest attribute key kept (longer keys are cut), as for raw metadata keys. */
export const MAX_ATTRIBUTE_KEY_LENGTH = 200;
export const TOO_DEEP = '[nested deeper than 32 levels]';

export type Attributes = Record<string, unknown>;

/** One AnyValue: strings, booleans, numbers (int64 as a number when exact, else its decimal string), bytes as base64. */
export function anyValue(value: unknown, depth = 0): unknown {
  if (!isObject(value)) return null;
  const v = value;
  if (depth >= MAX_ATTRIBUTE_DEPTH) return TOO_DEEP;
  if (typeof v.stringValue === 'string') return v.stringValue;
  if (typeof v.boolValue === 'boolean') return v.boolValue;
  if (v.intValue !== undefined && v.intValue !== null) {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : String(v.intValue);
  }
  if (typeof v.doubleValue === 'number') return Number.isFinite(v.doubleValue) ? v.doubleValue : String(v.doubleValue);
  if (typeof v.bytesValue === 'string') return v.bytesValue;
  if (isObject(v.arrayValue)) return Array.isArray(v.arrayValue.values) ? v.arrayValue.values.map((x) => anyValue(x, depth + 1)) : [];
  if (isObject(v.kvlistValue)) return keyValues(v.kvlistValue.values, depth + 1);
  return null;
}

/** A KeyValue list as an object; a repeated key keeps its last value; keys like `__proto__` stay plain data. */
export function keyValues(list: unknown, depth = 0): Attributes {
  const out: Attributes = {};
  if (!Array.isArray(list)) return out;
  for (const item of list) {
    const name = isObject(item) ? item.key : undefined;
    if (typeof name !== 'string') continue;
    const key = name.length > MAX_ATTRIBUTE_KEY_LENGTH ? name.slice(0, MAX_ATTRIBUTE_KEY_LENGTH) : name;
    setOwn(out, key, anyValue((item as Record<string, unknown>).value, depth));
  }
  return out;
}

/** The attribute `key` when it is a non-empty string (trimmed), else null. */
export function stringAttr(attrs: Attributes, key: string): string | null {
  const v = Object.prototype.hasOwnProperty.call(attrs, key) ? attrs[key] : undefined;
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t ? t : null;
}

/** The attribute `key` as text when it is a string or a finite number, else null. */
export function textAttr(attrs: Attributes, key: string): string | null {
  const v = Object.prototype.hasOwnProperty.call(attrs, key) ? attrs[key] : undefined;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return stringAttr(attrs, key);
}

/**
 * A copy of `attrs` holding whole entries, in order, while their JSON stays within `maxBytes`; the number of entries
 * left out (the first that does not fit and every one after it) is returned beside it. Used for attributes shared by
 * every item of an export (the resource), so one big resource cannot be copied onto thousands of stored events; it
 * reads entries only until the room is used up.
 */
export function boundedAttributes(attrs: Attributes, maxBytes: number): { kept: Attributes; omitted: number } {
  const kept: Attributes = {};
  const keys = Object.keys(attrs);
  let size = 2;
  let i = 0;
  for (; i < keys.length; i++) {
    const key = keys[i];
    const entry = jsonStringBytes(key) + 1 + jsonBytes(attrs[key] ?? null, maxBytes - size) + (i ? 1 : 0);
    if (size + entry > maxBytes) break;
    size += entry;
    setOwn(kept, key, attrs[key]);
  }
  return { kept, omitted: keys.length - i };
}

/** The JSON bytes of an attribute value, or more than `limit` when it is larger (counted no further than that). */
function jsonBytes(value: unknown, limit: number): number {
  if (typeof value === 'string') return value.length > limit ? limit + 1 : jsonStringBytes(value);
  if (value === null || typeof value !== 'object') return String(value).length;
  const text = JSON.stringify(value);
  return text.length > limit ? limit + 1 : Buffer.byteLength(text);
}
