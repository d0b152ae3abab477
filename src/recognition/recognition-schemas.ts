// Request and answer schemas of /api/v1/recognition/* (profiles, the test endpoint, the unrecognized report).
import { z } from 'zod';
import { PROFILE_FIELDS } from '../ingest/recognition/profile.js';

const expression = z.string().min(1).max(100_000);

/** A profile as an organization writes it (its version is the service's). */
export const profileInput = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'lower-case letters, digits, `.`, `_`, `-`; at most 64 characters'),
  description: z.string().max(500).default(''),
  source: z.string().max(500).default(''),
  when: expression,
  fields: z.partialRecord(z.enum(PROFILE_FIELDS), expression),
});

export const profileView = z.object({
  id: z.string(),
  version: z.number().int(),
  description: z.string(),
  source: z.string(),
  fixture: z.string().optional(),
  when: z.string(),
  fields: z.record(z.string(), z.string()),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
});

export const profileList = z.object({
  items: z.array(profileView).describe("The organization's own profiles, in the order they are tried"),
  builtin: z.array(profileView).describe('The built-in profiles, tried after them'),
  limits: z.object({ maxProfiles: z.number().int(), maxExpressionChars: z.number().int(), maxExpressionNodes: z.number().int(), maxCostPerRecord: z.number().int() }),
});

export const profileParams = z.object({ profileId: z.string() });

export const TEST_SOURCES = ['line', 'raw', 'cloudwatch', 'firehose', 'datadog', 'otlp-traces', 'otlp-logs'] as const;

export const testBody = z.object({
  source: z.enum(TEST_SOURCES).describe('How to read `sample`: a log line, or the body of that ingest source (OTLP as an OTLP/JSON export)'),
  sample: z.unknown().describe('A log line (string), or the body as that source receives it'),
  logGroup: z.string().max(512).optional().describe('For `line`: the log group it is read from'),
  profiles: z.array(profileInput).max(100).optional().describe("Draft profiles tried first (before the organization's stored ones); not stored"),
  useStored: z.boolean().default(true).describe("Try the organization's stored profiles (after the drafts)"),
});

const testEvent = z.object({
  type: z.string(),
  source: z.string(),
  occurredAt: z.string(),
  serverId: z.string().nullable(),
  sessionId: z.string().nullable(),
  toolName: z.string().nullable(),
  action: z.string().nullable(),
  latencyMs: z.number().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  profile: z.object({ id: z.string(), version: z.number() }).nullable().describe('The profile that read the record; null for the generic reading'),
});

export const testAnswer = z.object({
  events: z.array(testEvent).describe('What would be stored, in order (nothing is)'),
  notStored: z.number().int().describe('Records accepted but not stored (spans that are not tool calls)'),
  empty: z.number().int(),
  failures: z.number().int().describe('Profile expressions that failed (each record fell through to the next profile)'),
  unrecognized: z.array(z.object({ source: z.string(), name: z.string(), count: z.number().int(), sample: z.string() })),
});

export const unrecognizedQuery = z.object({
  source: z.string().max(40).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
});

export const unrecognizedList = z.object({
  items: z.array(z.object({ source: z.string(), name: z.string(), count: z.number().int(), sample: z.string(), firstSeen: z.string(), lastSeen: z.string() })),
});
