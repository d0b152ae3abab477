// SQL for exports: the seq bounds of a time range, and one keyset page of it in seq order, bounded by rows and bytes.
import type { Queryable } from '../db/db.js';
import { seqBoundsOfTimes } from './event-hours.js';
import { readBytePage } from './byte-pages.js';
import { fieldConditions, type EventFilter } from './event-filters.js';
import { currentSeq, toAuditEventRow, type AuditEventDbRow, type AuditEventRow } from './audit-repo.js';

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

/**
 * Events of the range (and filters) with seq in (afterSeq, upToSeq], in seq order: at most `limit`, and no more of them than fit in
 * `maxBytes` (the first one always); `cutByBytes` when the budget ended the page before `limit` (readBytePage).
 */
export async function readExportPage(
  db: Queryable,
  orgId: string,
  range: ExportRange,
  afterSeq: number,
  upToSeq: number,
  limit: number,
  maxBytes: number,
): Promise<{ rows: AuditEventRow[]; cutByBytes: boolean }> {
  const params: unknown[] = [orgId, afterSeq, upToSeq];
  const where = ['org_id = $1', 'seq > $2', 'seq <= $3'];
  if (range.from) where.push(`occurred_at >= $${params.push(range.from.toISOString())}`);
  if (range.to) where.push(`occurred_at < $${params.push(range.to.toISOString())}`);
  fieldConditions(range, '$1', where, params);
  const page = await readBytePage<AuditEventDbRow>(db, { where, params, order: 'asc', limit, maxBytes });
  return { rows: page.rows.map(toAuditEventRow), cutByBytes: page.cutByBytes };
}
