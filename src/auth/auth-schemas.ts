// Request bodies and path parameters of the login, admin and API key routes, and the admin answers.
import { z } from 'zod';
import { normalizeEmail } from './emails.js';
import { SCOPES } from './tokens.js';

export const loginBody = z.object({
  email: z.string().max(1000).transform(normalizeEmail).pipe(z.string().min(3).max(320)),
  password: z.string().min(1).max(1024),
});

export const activeOrgBody = z.object({ organizationId: z.string().uuid() });

export const createOrgBody = z.object({ name: z.string().trim().min(1).max(200) });

export const createUserBody = z.object({
  // Stored normalized, and ASCII only (the email check refuses anything else).
  email: z.string().max(1000).transform(normalizeEmail).pipe(z.string().email().max(320)),
  password: z.string().min(8).max(1024),
  role: z.enum(['admin', 'member']).default('member'),
});

export const createKeyBody = z.object({
  name: z.string().trim().min(1).max(200),
  scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length).default([...SCOPES]),
});

export const uuidParam = z.object({ id: z.string().uuid() });
export const orgIdParam = z.object({ orgId: z.string().uuid() });

/** Answers of the operator admin API. */
export const orgListBody = z.object({ items: z.array(z.object({ id: z.string(), name: z.string() })) });
export const createdOrgBody = z.object({ id: z.string(), name: z.string() });
export const createdUserBody = z.object({ id: z.string(), email: z.string(), role: z.enum(['admin', 'member']), existing: z.literal(true).optional() });
