// Normalizes log level values (`info`, `Warning`, pino's numeric 30) to upper-case words.

/** pino's numeric levels. */
const NUMERIC_LEVELS: ReadonlyMap<number, string> = new Map([
  [10, 'TRACE'],
  [20, 'DEBUG'],
  [30, 'INFO'],
  [40, 'WARN'],
  [50, 'ERROR'],
  [60, 'FATAL'],
]);

/** A log level in upper case (`info` → `INFO`, pino's 30 → `INFO`); null for anything that isn't a short word. */
export function normalizeLevel(value: unknown): string | null {
  if (typeof value === 'number') return NUMERIC_LEVELS.get(value) ?? null;
  if (typeof value !== 'string' || value.length > 64) return null;
  const word = value.trim();
  return /^[A-Za-z]{1,20}$/.test(word) ? word.toUpperCase() : null;
}
