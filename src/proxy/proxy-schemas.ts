// Zod schemas of the proxy's admin API: upstream servers, policy rules, the dry run and the organization's settings.
import { z } from 'zod';
import { POLICY_ACTIONS } from './policy-engine.js';

export const SERVER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const serverIdSchema = z.string().regex(SERVER_ID_PATTERN, 'must be 1-100 characters of A-Z a-z 0-9 . _ - (starting with a letter or digit)');
export const serverParams = z.object({ serverId: z.string() });
export const ruleParams = z.object({ ruleId: z.string() });

/** Headers the proxy sets itself, or that would change how the exchange works: never registered. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'expect', 'cookie', 'last-event-id', 'x-audit-session-id']);
const MAX_HEADERS = 20;

const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'must be an HTTP header name (at most 100 characters)')
  .refine((n) => !RESERVED_HEADERS.has(n.toLowerCase()) && !n.toLowerCase().startsWith('mcp-') && !n.toLowerCase().startsWith('proxy-'), 'is set by the proxy or the client and cannot be registered');
const headerValue = z.string().max(4096).regex(/^[\t\x20-\x7e\x80-\uffff]*$/, 'may not contain control characters');

export const headerInput = z.object({
  name: headerName,
  /** The value; for a secret header, omit it to keep the value stored before. */
  value: headerValue.optional(),
  secret: z.boolean().default(false),
});

export const putServerBody = z.object({
  url: z
    .string()
    .max(2048)
    .url()
    .refine((u) => /^https?:$/.test(new URL(u).protocol), 'must be an http or https URL')
    .refine((u) => !new URL(u).username && !new URL(u).password, 'may not carry credentials; register them as a secret header'),
  headers: z
    .array(headerInput)
    .max(MAX_HEADERS)
    .default([])
    .refine((hs) => new Set(hs.map((h) => h.name.toLowerCase())).size === hs.length, 'header names must be unique'),
  timeoutMs: z.number().int().min(100).optional(),
});

export const serverView = z.object({
  serverId: z.string(),
  url: z.string(),
  endpoint: z.string(),
  headers: z.array(z.object({ name: z.string(), value: z.string().nullable(), secret: z.boolean() })),
  timeoutMs: z.number(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const serverList = z.object({ items: z.array(serverView) });

export const ruleBody = z.object({
  name: z.string().trim().min(1).max(200),
  condition: z.string().min(1),
  action: z.enum(POLICY_ACTIONS),
  reason: z.string().trim().max(500).nullable().optional(),
  enabled: z.boolean().default(true),
});
export const createRuleBody = ruleBody.extend({ position: z.number().int().min(0).optional() });

export const ruleView = z.object({
  ruleId: z.string(),
  position: z.number(),
  name: z.string(),
  condition: z.string(),
  action: z.enum(POLICY_ACTIONS),
  reason: z.string().nullable(),
  enabled: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const ruleList = z.object({ items: z.array(ruleView) });
export const reorderBody = z.object({ ruleIds: z.array(z.string().uuid()).max(10_000) });

export const dryRunBody = z.object({
  call: z.object({
    serverId: z.string().max(200),
    toolName: z.string().min(1).max(200),
    arguments: z.record(z.string(), z.unknown()).default({}),
    sessionId: z.string().max(200).default('dry-run'),
    key: z.object({ id: z.string().max(200).default(''), name: z.string().max(200).default('') }).default({ id: '', name: '' }),
    client: z.object({ name: z.string().max(200).default(''), version: z.string().max(100).default(''), userAgent: z.string().max(200).default('') }).default({ name: '', version: '', userAgent: '' }),
  }),
  /** Rules to try instead of the stored ones (e.g. an edit not saved yet). */
  rules: z.array(ruleBody.extend({ ruleId: z.string().max(100).optional() })).max(10_000).optional(),
});
export const dryRunAnswer = z.object({
  action: z.enum(POLICY_ACTIONS),
  rule: z.object({ id: z.string(), name: z.string() }).nullable(),
  reason: z.string().nullable(),
  rules: z.array(z.object({ ruleId: z.string(), name: z.string(), enabled: z.boolean(), matched: z.boolean(), error: z.string().nullable() })),
});

export const settingsBody = z.object({ storeDown: z.enum(['refuse', 'forward']) });
