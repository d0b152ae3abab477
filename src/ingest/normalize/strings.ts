// Bounds and small string helpers shared by the normalizers: id truncation, scan windows, value-to-id coercion.

/** Longest id, name or action word kept from a message. */
export const MAX_ID_LENGTH = 200;
/** Regex scans over free text only look at this many leading characters. */
export const SCAN_WINDOW = 64 * 1024;
/** Longest message parsed as JSON or logfmt; longer ones are treated as text. */
export const MAX_STRUCTURED_CHARS = 1024 * 1024;

/** Cuts `s` to at most `max` UTF-16 units without leaving half of a surrogate pair at the end. */
export function truncate(s: string, max: number = MAX_ID_LENGTH): string {
  if (s.length <= max) return s;
  let end = max;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return s.slice(0, end);
}

/** The first SCAN_WINDOW characters of `s`, for regex scans. */
export function scanWindow(s: string): string {
  return s.length > SCAN_WINDOW ? s.slice(0, SCAN_WINDOW) : s;
}

/** Trimmed and truncated, or null when nothing is left. */
export function cleanString(s: string): string | null {
  const t = (s.length > SCAN_WINDOW ? s.slice(0, SCAN_WINDOW) : s).trim();
  return t ? truncate(t) : null;
}

export { hasOwn, ownValue } from '../../shared/own-keys.js';

/**
 * An id or name as a string: strings are trimmed, numbers written out in full (integers beyond
 * Number.MAX_SAFE_INTEGER are taken from `exactDigits` when it can find the original digits),
 * anything else is null. The result is at most MAX_ID_LENGTH characters.
 */
export function idString(value: unknown, exactDigits?: (n: number) => string | null): string | null {
  if (typeof value === 'string') return cleanString(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      const exact = exactDigits ? exactDigits(value) : null;
      return truncate(exact ?? BigInt(value).toString());
    }
    return truncate(String(value));
  }
  if (typeof value === 'bigint') return truncate(value.toString());
  return null;
}
