// A recognition profile: when it applies to a record and how each audit field is read from it, as CEL expressions.
import { z } from 'zod';

/** The audit fields a profile can read, each a CEL expression over the record view. */
export const PROFILE_FIELDS = ['tool', 'action', 'actionWord', 'server', 'session', 'latencyMs', 'time', 'traceId', 'callId', 'toolCall'] as const;
export type ProfileField = (typeof PROFILE_FIELDS)[number];

/**
 * - `when`: a bool; the profile reads the record only when it is true.
 * - `toolCall`: a bool (default true): false claims the record for this profile as a log row, not a tool call (e.g. an
 *   agent's "accept" decision whose call is reported by a later record).
 * - `tool`, `server`, `session`, `traceId`, `callId`: strings (null when absent).
 * - `action`: a word mapped onto allow/deny/redact/flag (an unknown word is kept as rawAction); `actionWord`: the raw word
 *   kept in metadata (default: the action's own word).
 * - `latencyMs`: a number of milliseconds, or a string with a unit (`69ms`, `1.2s`).
 * - `time`: the emitter's time: ISO 8601 text or epoch seconds/ms/ns; null or 0 falls back to the record's own time, then
 *   to when it was received.
 */
export interface Profile {
  id: string;
  version: number;
  description: string;
  /** Public documentation or source the profile follows (URL or repo/path). */
  source: string;
  /** Fixture file the profile is tested against (built-in profiles). */
  fixture?: string;
  when: string;
  fields: Partial<Record<ProfileField, string>>;
}

const expression = z.string().min(1);

export const profileSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'lower-case letters, digits, `.`, `_`, `-`; at most 64 characters'),
  version: z.number().int().min(1),
  description: z.string().max(500),
  source: z.string().max(500),
  fixture: z.string().max(200).optional(),
  when: expression,
  fields: z.partialRecord(z.enum(PROFILE_FIELDS), expression),
});
