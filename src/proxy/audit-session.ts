// Which audit session a proxied tools/call belongs to: the client's own id (in `_meta` or a header), else the MCP
// session of 2025-era traffic, else one session per API key and client (2026-07-28 has no sessions).
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { AUDIT_SESSION_META } from './mcp-message.js';
import type { SessionSource } from './call-record.js';

export const AUDIT_SESSION_HEADER = 'x-audit-session-id';
/** Session ids are at most 200 characters (as everywhere in the service). */
export const MAX_SESSION_ID = 200;

const printable = (s: string) => /^[\x21-\x7e][\x20-\x7e]*$/.test(s);

/** An id too long to keep whole keeps its start and a digest of the whole. */
function bounded(id: string): string {
  if (id.length <= MAX_SESSION_ID) return id;
  return `${id.slice(0, MAX_SESSION_ID - 41)}~${createHash('sha256').update(id).digest('hex').slice(0, 40)}`;
}

export type AuditSession = { id: string; source: SessionSource } | { error: string };

export function auditSessionOf(opts: {
  meta: Record<string, unknown> | null;
  headers: IncomingHttpHeaders;
  keyId: string;
  clientName: string;
}): AuditSession {
  const fromMeta = opts.meta?.[AUDIT_SESSION_META];
  if (fromMeta !== undefined) {
    if (typeof fromMeta !== 'string' || fromMeta.length === 0 || fromMeta.length > MAX_SESSION_ID || !printable(fromMeta)) {
      return { error: `_meta["${AUDIT_SESSION_META}"] must be 1-${MAX_SESSION_ID} printable ASCII characters` };
    }
    return { id: fromMeta, source: 'meta' };
  }
  const fromHeader = opts.headers[AUDIT_SESSION_HEADER];
  if (fromHeader !== undefined) {
    if (typeof fromHeader !== 'string' || fromHeader.length === 0 || fromHeader.length > MAX_SESSION_ID || !printable(fromHeader)) {
      return { error: `the X-Audit-Session-Id header must be 1-${MAX_SESSION_ID} printable ASCII characters` };
    }
    return { id: fromHeader, source: 'header' };
  }
  const mcpSession = opts.headers['mcp-session-id'];
  if (typeof mcpSession === 'string' && mcpSession.length > 0) return { id: bounded(mcpSession), source: 'mcp-session-id' };
  return { id: bounded(`key:${opts.keyId}/${opts.clientName || 'unknown-client'}`), source: 'key-and-client' };
}
