// The one normalization of an email address, used by the login limiter, the login lookup and user creation alike.

/**
 * Compatibility-normalized (NFKC: fullwidth letters, ligatures, the Kelvin sign become plain letters), trimmed and
 * lower-cased. Stored emails are ASCII (user creation validates them after this), so a lookup compares this form with
 * the stored email lower-cased, and never lets the database lower-case what the client sent: what the limiter counts
 * is exactly what can match an account (with Postgres' lower(), `İ` would match `i` while the limiter counted `i̇`).
 */
export function normalizeEmail(raw: string): string {
  return raw.normalize('NFKC').trim().toLowerCase();
}
