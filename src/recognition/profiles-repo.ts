// SQL for an organization's own recognition profiles, in the order they were added.
import type { Queryable } from '../db/db.js';
import type { Profile } from '../ingest/recognition/profile.js';

export interface StoredProfile {
  profile: Profile;
  createdAt: string;
  updatedAt: string;
}

interface DbRow {
  body: Profile | string;
  version: number;
  created_at: Date | string;
  updated_at: Date | string;
}

function toStored(r: DbRow): StoredProfile {
  const body = typeof r.body === 'string' ? (JSON.parse(r.body) as Profile) : r.body;
  return { profile: { ...body, version: Number(r.version) }, createdAt: new Date(r.created_at).toISOString(), updatedAt: new Date(r.updated_at).toISOString() };
}

export async function listProfiles(db: Queryable, orgId: string, limit: number): Promise<StoredProfile[]> {
  const r = await db.query<DbRow>('SELECT body, version, created_at, updated_at FROM recognition_profiles WHERE org_id = $1 ORDER BY position LIMIT $2', [orgId, limit]);
  return r.rows.map(toStored);
}

export async function countProfiles(db: Queryable, orgId: string): Promise<number> {
  const r = await db.query<{ n: string | number }>('SELECT count(*) AS n FROM recognition_profiles WHERE org_id = $1', [orgId]);
  return Number(r.rows[0].n);
}

/** Serializes changes to one organization's profiles (the count check and the write). */
export async function lockOrgProfiles(tx: Queryable, orgId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('audit-stream:recognition-profiles'), hashtext($1))", [orgId]);
}

/** Adds a profile, or replaces the one with its id (keeping its place) with the next version. */
export async function putProfile(tx: Queryable, orgId: string, profile: Omit<Profile, 'version'>): Promise<{ stored: StoredProfile; created: boolean }> {
  const r = await tx.query<DbRow & { created: boolean }>(
    `INSERT INTO recognition_profiles (org_id, profile_id, version, body) VALUES ($1, $2, 1, $3::jsonb)
     ON CONFLICT (org_id, profile_id) DO UPDATE SET version = recognition_profiles.version + 1, body = EXCLUDED.body, updated_at = now()
     RETURNING body, version, created_at, updated_at, (xmax = 0) AS created`,
    [orgId, profile.id, JSON.stringify(profile)],
  );
  return { stored: toStored(r.rows[0]), created: r.rows[0].created };
}

export async function deleteProfile(tx: Queryable, orgId: string, profileId: string): Promise<boolean> {
  const r = await tx.query('DELETE FROM recognition_profiles WHERE org_id = $1 AND profile_id = $2', [orgId, profileId]);
  return r.rowCount > 0;
}
