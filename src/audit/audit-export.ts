// An export as NDJSON text: keyset pages bounded by rows and bytes, read one at a time, each only when the reader wants more.
import type { Queryable } from '../db/db.js';
import type { AuditEventRow } from './audit-repo.js';
import { exportSeqBounds, readExportPage, type ExportRange } from './export-repo.js';

export interface ExportProgress {
  /** Events written so far. */
  rows: number;
  /** Seq of the last event written (0 before the first). */
  lastSeq: number;
}

export interface ExportPages {
  /** Most events one page reads (EXPORT_PAGE_ROWS). */
  rows: number;
  /** Most bytes of one page's events (READ_PAGE_MAX_BYTES); a larger event is a page by itself. */
  bytes: number;
  /** A page ended early by its byte budget. */
  onCut?: () => void;
  /** Runs one read (the range's bounds, a page) in its turn: the organization's read slots. */
  turn?: <T>(read: () => Promise<T>) => Promise<T>;
}

/** Text handed on at once: a page's lines are yielded in pieces of about this size, not joined into one string. */
const PIECE_CHARS = 64 * 1024;

/**
 * Yields the range's events as NDJSON, in seq order, each event once, a page at a time (at most `pages.rows` events and
 * `pages.bytes` of them, readBytePage), in pieces of about 64 KiB. Every page is one or two short queries in its turn
 * (no connection is held between pages); the consumer pulls, so a slow client is not read ahead of by more than one page plus its stream
 * buffer, and the memory an export holds is one page's events and one piece of text. Stops as soon as `signal` aborts
 * (the client went away).
 */
export async function* exportNdjson(
  db: Queryable,
  orgId: string,
  range: ExportRange & { afterSeq?: number },
  pages: ExportPages,
  signal: AbortSignal,
  progress: ExportProgress = { rows: 0, lastSeq: 0 },
): AsyncGenerator<string> {
  const turn = pages.turn ?? ((read) => read());
  const bounds = await turn(() => exportSeqBounds(db, orgId, range));
  if (!bounds) return;
  let after = Math.max(bounds.afterSeq, range.afterSeq ?? 0);
  while (after < bounds.upToSeq && !signal.aborted) {
    const from = after;
    const page = await turn(() => readExportPage(db, orgId, range, from, bounds.upToSeq, pages.rows, pages.bytes));
    const rows: (AuditEventRow | null)[] = page.rows;
    if (rows.length === 0 || signal.aborted) return;
    if (page.cutByBytes) pages.onCut?.();
    const count = rows.length;
    let piece = '';
    let lines = 0;
    for (let i = 0; i < count; i++) {
      const row = rows[i]!;
      rows[i] = null; // each event's object can go as soon as its line is made
      piece += `${JSON.stringify(row)}\n`;
      lines++;
      after = row.seq;
      if (piece.length >= PIECE_CHARS || i === count - 1) {
        progress.rows += lines;
        progress.lastSeq = after;
        yield piece;
        piece = '';
        lines = 0;
        if (signal.aborted) return;
      }
    }
    if (count < pages.rows && !page.cutByBytes) return;
  }
}
