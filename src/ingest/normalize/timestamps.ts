// Parses timestamps found in log messages (ISO 8601, epoch seconds or milliseconds) into Dates within a storable range.

/** Earliest accepted instant: the Unix epoch. */
export const MIN_TIMESTAMP_MS = 0;
/** Latest accepted instant: 9999-12-31T23:59:59.999Z (years past 9999 are rejected). */
export const MAX_TIMESTAMP_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
/** Epoch numbers below this are seconds, others milliseconds (1e11 s is the year 5138; 1e11 ms is 1973). */
export const EPOCH_SECONDS_BELOW = 1e11;

const NUMERIC = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
// Date, then optionally a time (seconds and fraction optional), then optionally Z or an offset.
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?)?$/;

function inRange(ms: number): Date | null {
  return Number.isFinite(ms) && ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS ? new Date(ms) : null;
}

function fromEpoch(n: number): Date | null {
  if (!Number.isFinite(n)) return null;
  return inRange(Math.round(n < EPOCH_SECONDS_BELOW ? n * 1000 : n));
}

/** Days of `month` (1-12) in `year` of the proleptic Gregorian calendar (as Date.UTC counts them). */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** ISO 8601 date or date-time; without a zone designator the time is taken as UTC (never the host's zone). */
function fromIso(text: string): Date | null {
  const m = ISO_8601.exec(text);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = m[4] === undefined ? 0 : Number(m[4]);
  const minute = m[5] === undefined ? 0 : Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  // Years before 1969 can't land in range even with an offset (and Date.UTC maps years 0-99 to 19xx).
  if (year < 1969 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 60) return null;
  let ms = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  if (m[9] !== undefined) {
    const offsetHours = Number(m[10]);
    const offsetMinutes = m[11] === undefined ? 0 : Number(m[11]);
    if (offsetHours > 23 || offsetMinutes > 59) return null;
    ms -= (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  return inRange(ms);
}

/**
 * A Date from an ISO 8601 string, or epoch seconds/milliseconds given as a number or numeric string
 * (below 1e11 means seconds, fractions allowed). Null for anything else, NaN, or instants before
 * 1970-01-01 or after 9999-12-31. Never throws.
 */
export function parseTimestamp(value: unknown): Date | null {
  try {
    if (typeof value === 'number') return fromEpoch(value);
    if (typeof value === 'string') {
      if (value.length > 64) return null;
      const text = value.trim();
      if (!text) return null;
      return NUMERIC.test(text) ? fromEpoch(Number(text)) : fromIso(text);
    }
    if (typeof value === 'bigint') {
      return value >= 0n && value <= BigInt(MAX_TIMESTAMP_MS) ? fromEpoch(Number(value)) : null;
    }
    if (value instanceof Date) return inRange(value.getTime());
    return null;
  } catch {
    return null;
  }
}
