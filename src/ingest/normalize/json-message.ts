// Parses JSON-object log messages, recovers exact big-integer ids from the raw text, and copies parsed values into bounded, prototype-safe records.
import { isObject } from '../../shared/input-safety.js';
import { MAX_STRUCTURED_CHARS } from './strings.js';

/** Nesting kept in `fields`; deeper values are replaced by TRUNCATED. */
export const MAX_FIELDS_DEPTH = 16;
/** Values (objects, arrays and scalars) kept in `fields`; the rest are dropped or replaced by TRUNCATED. */
export const MAX_FIELDS_NODES = 10_000;
export const TRUNCATED = '[truncated]';

/** The object a message holds when it is a JSON object (`{...}`, surrounding whitespace allowed); null otherwise. */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  if (text.length > MAX_STRUCTURED_CHARS + 1024) return null;
  const t = text.trim();
  if (t.length < 2 || t.length > MAX_STRUCTURED_CHARS || t.charCodeAt(0) !== 0x7b || t.charCodeAt(t.length - 1) !== 0x7d) return null;
  try {
    const value: unknown = JSON.parse(t);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/**
 * JSON.parse rounds integers above 2^53. For `"key": <digits>` in the raw JSON text whose value parses to `value`,
 * returns the digits as written; null if not found.
 */
export function exactIntegerText(raw: string, key: string, value: number): string | null {
  const re = new RegExp(`"${escapeRegExp(key)}"\\s*:\\s*(-?\\d{16,400})(?![\\d.eE])`, 'g');
  for (let i = 0, m = re.exec(raw); m !== null && i < 100; i++, m = re.exec(raw)) {
    if (Number(m[1]) === value) return m[1];
  }
  return null;
}

interface Budget {
  nodes: number;
}

function copy(value: unknown, depth: number, budget: Budget): unknown {
  budget.nodes--;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_FIELDS_DEPTH) return TRUNCATED;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (budget.nodes <= 0) {
        out.push(TRUNCATED);
        break;
      }
      out.push(copy(item, depth + 1, budget));
    }
    return out;
  }
  // A prototype-less accumulator makes `__proto__` an ordinary key; spreading copies it as plain data.
  const acc = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value)) {
    if (budget.nodes <= 0) {
      acc[key] = TRUNCATED;
      break;
    }
    acc[key] = copy((value as Record<string, unknown>)[key], depth + 1, budget);
  }
  return { ...acc };
}

/**
 * A copy of a parsed JSON object for metadata: at most MAX_FIELDS_DEPTH levels and MAX_FIELDS_NODES values,
 * `__proto__`/`constructor` keys kept as plain own data.
 */
export function boundedFields(record: Record<string, unknown>): Record<string, unknown> {
  // What JSON.parse returns already holds every key (`__proto__` too) as own data: within the bounds, the copy would equal it.
  if (withinBounds(record, 0, { nodes: MAX_FIELDS_NODES })) return record;
  return copy(record, 0, { nodes: MAX_FIELDS_NODES }) as Record<string, unknown>;
}

/**
 * True when copy() would change nothing: no object or array at MAX_FIELDS_DEPTH or deeper, and at most MAX_FIELDS_NODES
 * values in all (counted as copy counts them), in plain JSON data (arrays and objects of Object.prototype only).
 */
function withinBounds(value: unknown, depth: number, budget: Budget): boolean {
  if (--budget.nodes < 0) return false;
  if (value === null || typeof value !== 'object') return true;
  if (depth >= MAX_FIELDS_DEPTH) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (!withinBounds(item, depth + 1, budget)) return false;
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const key of Object.keys(value)) if (!withinBounds((value as Record<string, unknown>)[key], depth + 1, budget)) return false;
  return true;
}
