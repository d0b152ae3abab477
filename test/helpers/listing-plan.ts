// The plan Postgres makes for the listing's query of a filter (the very statement listAuditEvents sends), for index tests.
import { listAuditEvents, type AuditEventFilter, type AuditEventRow } from '../../src/audit/audit-repo.js';
import type { Queryable } from '../../src/db/db.js';

/** Lists the organization's events for `f` (newest first, 50, unless `f` says otherwise) and EXPLAINs the statement that did it. */
export async function listingPlan(db: Queryable, orgId: string, f: Partial<AuditEventFilter>): Promise<{ rows: AuditEventRow[]; plan: string }> {
  const sent: { sql: string; params: unknown[] }[] = [];
  const recorder: Queryable = {
    query: (async (sql: string, params: unknown[] = []) => {
      sent.push({ sql, params });
      return db.query(sql, params);
    }) as Queryable['query'],
  };
  const { rows } = await listAuditEvents(recorder, orgId, { order: 'desc', limit: 50, maxBytes: 4 * 1024 * 1024, ...f });
  const { sql, params } = sent[sent.length - 1];
  const r = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
  return { rows, plan: r.rows.map((x) => x['QUERY PLAN']).join('\n') };
}
