// The rule that lets a listing page come from a lagging replica without skipping an event: otherwise it comes from the primary.
import type { Db } from '../db/db.js';
import type { ReadReplica } from '../db/read-replica.js';
import { currentSeq, type AuditEventPage, type AuditEventFilter } from './audit-repo.js';

/**
 * One listing page, on the replica when that cannot skip an event, else on the primary. An organization's seqs commit
 * in order, so a replica holds a prefix of them, up to its copy of the org's counter (`head`):
 * - newest first after a cursor, the page needs every seq below the cursor: only a replica with `head >= cursor - 1`;
 * - oldest first, a page that would end the listing (not full) is taken only when the primary holds no later seq
 *   either; otherwise it is read again from the primary (a full page continues from its last seq, which both have).
 * A first page newest first shows the replica's state, at most DATABASE_READ_MAX_LAG_MS old.
 */
export async function listPage(replica: ReadReplica, orgId: string, f: AuditEventFilter, read: (db: Db) => Promise<AuditEventPage>): Promise<AuditEventPage> {
  return replica.run(async (db) => {
    if (!replica.isReplica(db)) return read(db);
    const head = await currentSeq(db, orgId);
    if (f.order === 'desc' && f.beforeSeq !== undefined && head < f.beforeSeq - 1) return read(replica.primary);
    const page = await read(db);
    const full = page.cutByBytes || page.rows.length >= f.limit;
    if (f.order === 'asc' && !full && head < (await currentSeq(replica.primary, orgId))) return read(replica.primary);
    return page;
  });
}
