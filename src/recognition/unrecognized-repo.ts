// SQL for the counts of unrecognized records per organization, source and name, with one sample each; bounded in rows.
import type { Db, Queryable } from '../db/db.js';
import { OTHER_NAME, type UnrecognizedTally } from '../ingest/recognition/recognizer.js';
import { storableText } from '../shared/input-safety.js';

export interface UnrecognizedRow {
  source: string;
  name: string;
  count: number;
  sample: string;
  firstSeen: string;
  lastSeen: string;
}

/**
 * Adds a request's tallies. Known (source, name) rows are counted up; new ones are inserted while the organization has
 * fewer than `maxNames` rows, the rest counted under (source, `(other)`) (which may take one row per source beyond it).
 */
export async function addUnrecognized(db: Db, orgId: string, tallies: UnrecognizedTally[], maxNames: number): Promise<void> {
  if (!tallies.length) return;
  const input = JSON.stringify(tallies.map((t) => ({ source: t.source, name: storableText(t.name), n: t.count, sample: storableText(t.sample) })));
  // One writer per organization at a time: the room left is read and filled in one snapshot, so two requests at once
  // would each fill the same room (20 requests of 100 new names each made 1,101 rows of a 500 bound).
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('audit-stream:recognition-unrecognized'), hashtext($1))", [orgId]);
    await insertTallies(tx, orgId, input, maxNames);
  });
}

async function insertTallies(db: Queryable, orgId: string, input: string, maxNames: number): Promise<void> {
  await db.query(
    `WITH input AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS x(source text, name text, n bigint, sample text)),
     known AS (
       UPDATE recognition_unrecognized u SET count = u.count + i.n, last_seen = now()
       FROM input i WHERE u.org_id = $1 AND u.source = i.source AND u.name = i.name RETURNING u.source, u.name),
     fresh AS (
       SELECT i.*, row_number() OVER (ORDER BY i.n DESC, i.source, i.name) AS k FROM input i
       WHERE NOT EXISTS (SELECT 1 FROM known WHERE known.source = i.source AND known.name = i.name)),
     room AS (SELECT GREATEST($3 - count(*), 0) AS free FROM recognition_unrecognized WHERE org_id = $1),
     placed AS (
       SELECT f.source, CASE WHEN f.k <= (SELECT free FROM room) THEN f.name ELSE $4 END AS name, sum(f.n) AS n, min(f.sample) AS sample
       FROM fresh f GROUP BY 1, 2)
     INSERT INTO recognition_unrecognized (org_id, source, name, count, sample)
     SELECT $1, source, name, n, sample FROM placed
     ON CONFLICT (org_id, source, name) DO UPDATE SET count = recognition_unrecognized.count + EXCLUDED.count, last_seen = now()`,
    [orgId, input, maxNames, OTHER_NAME],
  );
}

interface DbRow {
  source: string;
  name: string;
  count: string | number;
  sample: string;
  first_seen: Date | string;
  last_seen: Date | string;
}

/** The organization's rows, most counted first; `source` narrows to one source. */
export async function listUnrecognized(db: Queryable, orgId: string, opts: { source?: string; limit: number }): Promise<UnrecognizedRow[]> {
  const r = await db.query<DbRow>(
    `SELECT source, name, count, sample, first_seen, last_seen FROM recognition_unrecognized
     WHERE org_id = $1 AND ($2::text IS NULL OR source = $2) ORDER BY count DESC, source, name LIMIT $3`,
    [orgId, opts.source ?? null, opts.limit],
  );
  return r.rows.map((x) => ({
    source: x.source,
    name: x.name,
    count: Number(x.count),
    sample: x.sample,
    firstSeen: new Date(x.first_seen).toISOString(),
    lastSeen: new Date(x.last_seen).toISOString(),
  }));
}

export async function clearUnrecognized(db: Queryable, orgId: string): Promise<void> {
  await db.query('DELETE FROM recognition_unrecognized WHERE org_id = $1', [orgId]);
}
