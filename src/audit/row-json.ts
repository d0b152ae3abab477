// Serializes rows to JSON arrays for the append statement (jsonb_to_recordset) in slices of bounded size, so no statement grows unbounded.
import { TooLarge } from '../shared/domain-errors.js';

/** Rows serialized together at most; a batch of up to this many ordinary rows stays one statement. */
export const ROWS_PER_SLICE = 2_000;
/** Characters of JSON one statement carries at most (a single larger row still goes alone). */
export const MAX_SLICE_CHARS = 8 * 1024 * 1024;

function stringifyOrNull(rows: unknown[]): string | null {
  try {
    return JSON.stringify(rows);
  } catch (err) {
    // V8 refuses strings past ~512 MiB with a RangeError: split instead of failing the request.
    if (err instanceof RangeError) return null;
    throw err;
  }
}

/**
 * JSON arrays of consecutive rows, in order, each at most `maxChars` long unless it holds a single row. Slices are
 * produced lazily, so only one is held at a time. A single row that cannot be serialized at all is a 413.
 */
export function* rowJsonSlices(rows: readonly unknown[], maxChars = MAX_SLICE_CHARS, rowsPerSlice = ROWS_PER_SLICE): Generator<string> {
  function* slice(from: number, to: number): Generator<string> {
    const json = stringifyOrNull(rows.slice(from, to));
    if (json !== null && (json.length <= maxChars || to - from === 1)) {
      yield json;
      return;
    }
    if (to - from === 1) throw new TooLarge('one entry is too large to store; send smaller entries');
    const mid = from + Math.floor((to - from) / 2);
    yield* slice(from, mid);
    yield* slice(mid, to);
  }
  for (let i = 0; i < rows.length; i += rowsPerSlice) yield* slice(i, Math.min(rows.length, i + rowsPerSlice));
}
