// JSON text parsing for the log ingest routes: integers beyond 2^53 (CloudWatch and Datadog ids) are kept as exact digit strings.
import { InvalidInput } from '../shared/domain-errors.js';
import { closingQuoteIndex, MAX_BODY_DEPTH, textNestsDeeper } from '../shared/input-safety.js';

const LONG_DIGIT_RUN = /\d{16}/;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/**
 * Rewrites JSON text so that every integer literal outside strings whose magnitude exceeds Number.MAX_SAFE_INTEGER
 * becomes a string of the same digits (`{"id": 3195310660696698337880}` → `{"id": "3195310660696698337880"}`).
 * Everything else is copied as is; invalid JSON stays invalid.
 */
export function quoteUnsafeIntegers(text: string): string {
  if (!LONG_DIGIT_RUN.test(text)) return text;
  const out: string[] = [];
  let copied = 0;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip a string, honouring backslash escapes.
      const close = closingQuoteIndex(text, i + 1);
      if (close === -1) break;
      i = close + 1;
      continue;
    }
    if (c === 0x2d || isDigit(c)) {
      const start = i;
      if (c === 0x2d) i++;
      const digitsStart = i;
      while (i < n && isDigit(text.charCodeAt(i))) i++;
      const digitsEnd = i;
      let integer = digitsEnd > digitsStart;
      if (i < n && (text[i] === '.' || text[i] === 'e' || text[i] === 'E')) {
        integer = false;
        while (i < n && /[0-9.eE+-]/.test(text[i])) i++;
      }
      if (integer && digitsEnd - digitsStart >= 16) {
        const literal = text.slice(start, digitsEnd);
        const value = BigInt(literal);
        if (value > MAX_SAFE || value < -MAX_SAFE) {
          out.push(text.slice(copied, start), '"', literal, '"');
          copied = digitsEnd;
        }
      }
      continue;
    }
    i++;
  }
  if (copied === 0) return text;
  out.push(text.slice(copied));
  return out.join('');
}

/** Parses a JSON body (big integers kept as strings); a 400 naming the problem when it isn't JSON or nests too deep. */
export function parseJsonText(text: string): unknown {
  if (text.trim() === '') throw new InvalidInput('body is empty; send a JSON object', undefined, 'invalid_json');
  if (textNestsDeeper(text, MAX_BODY_DEPTH)) throw new InvalidInput(`body nests arrays or objects deeper than ${MAX_BODY_DEPTH} levels`, undefined, 'invalid_json');
  try {
    return JSON.parse(quoteUnsafeIntegers(text));
  } catch (err) {
    throw new InvalidInput(`body is not valid JSON: ${(err as Error).message.slice(0, 200)}`, undefined, 'invalid_json');
  }
}

/** Bytes as UTF-8 text, or null when they are not valid UTF-8. A leading byte order mark is dropped. */
export function utf8OrNull(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

/** Bytes that must be UTF-8 JSON: parsed, or a 400. */
export function parseJsonBytes(bytes: Uint8Array, what = 'body'): unknown {
  const text = utf8OrNull(bytes);
  if (text === null) throw new InvalidInput(`${what} is neither gzip nor UTF-8 JSON text`);
  return parseJsonText(text);
}
