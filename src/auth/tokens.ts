// Random secrets (API keys, login tokens), their stored digests and constant-time comparison.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'ask_';
export const SCOPES = ['events:read', 'ingest:write', 'sessions:write', 'mcp:call', 'mcp:admin'] as const;
export type Scope = (typeof SCOPES)[number];

export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function newLoginToken(): string {
  return randomBytes(32).toString('base64url');
}

export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time equality of two hex digests (or any two strings), false when lengths differ. */
export function safeEqual(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

/** Shape check before any lookup: keys are the prefix plus 43 base64url characters. */
export function looksLikeApiKey(s: string): boolean {
  return /^ask_[A-Za-z0-9_-]{43}$/.test(s);
}
