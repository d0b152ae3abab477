// Maps decision words found in logs (allowed, blocked, redacted...) onto the audit action vocabulary.
import { SCAN_WINDOW, truncate } from './strings.js';

/**
 * Action vocabulary. Words are matched case-insensitively after trimming surrounding whitespace.
 *
 * | action   | words                                                                                       |
 * |----------|---------------------------------------------------------------------------------------------|
 * | `allow`  | allow, allowed, permit, permitted, pass, passed, accept, accepted, approve, approved, ok, success |
 * |          | outcome words of a call the proxy let through: succeeded, completed, error, errored, failed, failure |
 * | `deny`   | deny, denied, block, blocked, reject, rejected, refuse, refused, forbid, forbidden, drop, dropped |
 * | `redact` | redact, redacted, mask, masked, sanitize, sanitized, scrub, scrubbed                        |
 * | `flag`   | flag, flagged, alert, alerted, warn, warned, review, audit, audited, suspicious             |
 *
 * Any other word maps to no action (`action: null`) and is kept as `rawAction` (trimmed, at most
 * 200 characters) so callers can store it in the event metadata.
 */
export type Action = 'allow' | 'deny' | 'redact' | 'flag';

export const ACTION_VOCABULARY: Readonly<Record<Action, readonly string[]>> = Object.freeze({
  allow: [
    ...['allow', 'allowed', 'permit', 'permitted', 'pass', 'passed', 'accept', 'accepted', 'approve', 'approved', 'ok', 'success'],
    // Outcomes of a call that was let through (gateways log success|error|blocked): the action is the proxy's, not the result.
    ...['succeeded', 'completed', 'error', 'errored', 'failed', 'failure'],
  ],
  deny: ['deny', 'denied', 'block', 'blocked', 'reject', 'rejected', 'refuse', 'refused', 'forbid', 'forbidden', 'drop', 'dropped'],
  redact: ['redact', 'redacted', 'mask', 'masked', 'sanitize', 'sanitized', 'scrub', 'scrubbed'],
  flag: ['flag', 'flagged', 'alert', 'alerted', 'warn', 'warned', 'review', 'audit', 'audited', 'suspicious'],
});

const WORD_TO_ACTION: ReadonlyMap<string, Action> = new Map(
  (Object.keys(ACTION_VOCABULARY) as Action[]).flatMap((action) => ACTION_VOCABULARY[action].map((word) => [word, action] as const)),
);

const LONGEST_WORD = 16;

export interface MappedAction {
  action: Action | null;
  rawAction: string | null;
}

/**
 * Maps a word to the vocabulary. Strings, finite numbers and booleans are considered (as their text);
 * anything else, or an empty word, gives `{ action: null, rawAction: null }`. Never throws.
 */
export function mapAction(word: unknown): MappedAction {
  let text: string;
  if (typeof word === 'string') text = word;
  else if ((typeof word === 'number' && Number.isFinite(word)) || typeof word === 'boolean' || typeof word === 'bigint') text = String(word);
  else return { action: null, rawAction: null };
  const trimmed = (text.length > SCAN_WINDOW ? text.slice(0, SCAN_WINDOW) : text).trim();
  if (!trimmed) return { action: null, rawAction: null };
  const action = trimmed.length <= LONGEST_WORD ? WORD_TO_ACTION.get(trimmed.toLowerCase()) : undefined;
  if (action) return { action, rawAction: null };
  return { action: null, rawAction: truncate(trimmed) };
}
