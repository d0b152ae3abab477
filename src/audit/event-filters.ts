// The filters of stored events shared by the listing, the count and the export: field filters, time range and free text, as SQL conditions.
import type { Queryable } from '../db/db.js';
import { InvalidInput } from '../shared/domain-errors.js';
import { seqBoundsOfTimes } from './event-hours.js';

export interface EventFilter {
  type?: string;
  serverId?: string;
  sessionId?: string;
  toolName?: string;
  action?: string;
  source?: string;
  from?: Date;
  to?: Date;
  /** Free text: every word (at most FREE_TEXT_MAX_WORDS) appears in the event's text, case-insensitively. */
  q?: string;
}

/** Most words of a free-text query; each is one more ILIKE per row scanned. */
export const FREE_TEXT_MAX_WORDS = 5;
export const FREE_TEXT_MAX_LENGTH = 200;

/** The words of a free-text query, or [] when it has none. */
export function freeTextWords(q: string | undefined): string[] {
  return (q ?? '').trim().split(/\s+/).filter(Boolean);
}

/**
 * Free text is not indexed (a trigram index on every event's metadata would cost about as much again as the table): it
 * scans the events of its time range, so it is accepted only with both `from` and `to`, at most `maxHours` apart, and
 * its statement runs under a time limit (the route's). Throws InvalidInput otherwise.
 */
export function checkFreeText(f: EventFilter, maxHours: number): void {
  const words = freeTextWords(f.q);
  if (words.length === 0) return;
  const issues: { path: string; message: string }[] = [];
  if (words.length > FREE_TEXT_MAX_WORDS) issues.push({ path: 'q', message: `at most ${FREE_TEXT_MAX_WORDS} words` });
  if (!f.from || !f.to) issues.push({ path: f.from ? 'to' : 'from', message: `free text (q) needs a time range: from and to, at most ${maxHours} h apart (SEARCH_MAX_RANGE_HOURS)` });
  else if (f.to.getTime() - f.from.getTime() > maxHours * 3_600_000) issues.push({ path: 'to', message: `free text (q) searches at most ${maxHours} h (SEARCH_MAX_RANGE_HOURS); narrow from and to, or use the field filters` });
  if (issues.length) throw new InvalidInput('free text needs a narrower query', issues, 'invalid_query');
}

/** A LIKE pattern matching `word` anywhere, with LIKE's own wildcards taken literally. */
const containing = (word: string): string => `%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The conditions of the field filters and free text (not the time range), appended to `where`, with their values
 * appended to `params`. `org` is the parameter holding the organization id.
 */
export function fieldConditions(f: EventFilter, org: string, where: string[], params: unknown[]): void {
  const add = (sql: string, v: unknown) => {
    params.push(v);
    where.push(sql.replace('?', `$${params.length}`));
  };
  // A column whose index is keyed by a hash of the value (the server, session, tool and source indexes by
  // audit_key_hash, migrations 011 and 046): the value and its key are both stated.
  const keyed = (column: string, key: string, v: string) => {
    add(`${column} = ?`, v);
    where.push(`${key}(${column}) = ${key}($${params.length}::text)`);
  };
  if (f.type) add('type = ?', f.type);
  if (f.serverId) keyed('server_id', 'audit_key_hash', f.serverId);
  if (f.sessionId) keyed('session_id', 'audit_key_hash', f.sessionId);
  if (f.toolName) keyed('tool_name', 'audit_key_hash', f.toolName);
  if (f.action) add('action = ?', f.action);
  if (f.source) keyed('source', 'audit_key_hash', f.source);
  // Each word in the row's fields and own metadata (the raw message, trace id, parsed fields...), or in the shared
  // metadata of its log batch (log group, stream: audit_contexts, few per organization).
  for (const word of freeTextWords(f.q).slice(0, FREE_TEXT_MAX_WORDS)) {
    params.push(containing(word));
    const p = `$${params.length}`;
    where.push(
      `(concat_ws(' ', server_id, session_id, tool_name, action, type, metadata::text) ILIKE ${p}
        OR (context_id IS NOT NULL AND context_id IN (SELECT c.id FROM audit_contexts c WHERE c.org_id = ${org} AND c.context::text ILIKE ${p})))`,
    );
  }
}

/**
 * Conditions for the time range: occurred_at within it, and the seq range of its hours (audit_event_hours), read
 * first so the query is planned with actual bounds. False when no stored hour touches the range (nothing matches).
 */
export async function timeConditions(db: Queryable, orgId: string, f: EventFilter, where: string[], params: unknown[]): Promise<boolean> {
  const add = (sql: string, v: unknown) => {
    params.push(v);
    where.push(sql.replace('?', `$${params.length}`));
  };
  if (f.from) add('occurred_at >= ?', f.from.toISOString());
  if (f.to) add('occurred_at < ?', f.to.toISOString());
  if (!f.from && !f.to) return true;
  const bounds = await seqBoundsOfTimes(db, orgId, f);
  if (!bounds) return false;
  add('seq >= ?', bounds.lo);
  add('seq <= ?', bounds.hi);
  return true;
}
