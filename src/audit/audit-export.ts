// An export as NDJSON text: keyset pages read one at a time, each only when the reader wants more (constant memory).
import type { Queryable } from '../db/db.js';
import { exportSeqBounds, readExportPage, type ExportRange } from './export-repo.js';

export interface ExportProgress {
  /** Events written so far. */
  rows: number;
  /** Seq of the last event written (0 before the first). */
  lastSeq: number;
}

/**
 * Yields the range's events as NDJSON, one chunk per page of at most `pageRows` lines, in seq order, each event once.
 * Every page is one short query (no connection is held between pages); the consumer pulls, so a slow client is not
 * read ahead of by more than one page plus its stream buffer. Stops as soon as `signal` aborts (the client went away).
 */
export async function* exportNdjson(
  db: Queryable,
  orgId: string,
  range: ExportRange & { afterSeq?: number },
  pageRows: number,
  signal: AbortSignal,
  progress: ExportProgress = { rows: 0, lastSeq: 0 },
): AsyncGenerator<string> {
  const bounds = await exportSeqBounds(db, orgId, range);
  if (!bounds) return;
  let after = Math.max(bounds.afterSeq, range.afterSeq ?? 0);
  while (after < bounds.upToSeq && !signal.aborted) {
    const rows = await readExportPage(db, orgId, range, after, bounds.upToSeq, pageRows);
    if (rows.length === 0 || signal.aborted) return;
    let chunk = '';
    for (const row of rows) chunk += `${JSON.stringify(row)}\n`;
    after = rows[rows.length - 1].seq;
    progress.rows += rows.length;
    progress.lastSeq = after;
    yield chunk;
    if (rows.length < pageRows) return;
  }
}
