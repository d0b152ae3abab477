// SQL for exports: the seq bounds of a time range, and one keyset page of it in seq order.
import type { Queryable } from '../db/db.js';
import { seqBoundsOfTimes } from './event-hours.js';
import { fieldConditions, type EventFilter } from './event-filters.js';
import { AUDIT_EVENT_COLUMNS, currentSeq, toAuditEventRow, type AuditEventDbRow, type AuditEventRow } from './audit-repo.js';

/** A time range, and optionally the listing's field filters and free text (the dashboard exports its current query). */
export interface ExportRange extends EventFilter {
  /** occurred_at >= from, when given. */
  from?: Date;
  /** occurred_at < to, when given. */
  to?: Date;
}

/**
 * The seqs (afterSeq, upToSeq] holding every stored event of the range, or null when it has none. Only events already
 * committed when the export starts are exported (the org counter is read first; seqs commit in order), so an export
 * ends even while events keep arriving. The bounds come from audit_event_hours (per hour of occurred_at, the seq range
 * of its events), so a narrow range of old events is not found by walking the whole organization.
 */
export async function exportSeqBounds(db: Queryable, orgId: string, range: ExportRange): Promise<{ afterSeq: number; upToSeq: number } | null> {
  const last = await currentSeq(db, orgId);
  if (last === 0) return null;
  if (!range.from && !range.to) return { afterSeq: 0, upToSeq: last };
  const b = await seqBoundsOfTimes(db, orgId, range, last);
  return b === null ? null : { afterSeq: b.lo - 1, upToSeq: Math.min(b.hi, last) };
}

/** Up to `limit` events of the range (and filters) with seq in (afterSeq, upToSeq], in seq order. */
export async function readExportPage(db: Queryable, orgId: string, range: ExportRange, afterSeq: number, upToSeq: number, limit: number): Promise<AuditEventRow[]> {
  const params: unknown[] = [orgId, afterSeq, upToSeq, limit];
  const where = ['org_id = $1', 'seq > $2', 'seq <= $3'];
  if (range.from) where.push(`occurred_at >= $${params.push(range.from.toISOString())}`);
  if (range.to) where.push(`occurred_at < $${params.push(range.to.toISOString())}`);
  fieldConditions(range, '$1', where, params);
  const r = await db.query<AuditEventDbRow>(`SELECT ${AUDIT_EVENT_COLUMNS} FROM audit_events WHERE ${where.join(' AND ')} ORDER BY seq LIMIT $4`, params);
  return r.rows.map(toAuditEventRow);
}
