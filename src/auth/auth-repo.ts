// SQL for organizations, users, memberships, login sessions and API keys.
import type { Queryable } from '../db/db.js';
import type { Scope } from './tokens.js';

export type Role = 'admin' | 'member';

export interface OrgRow {
  id: string;
  name: string;
}
export interface UserRow {
  id: string;
  email: string;
  password_hash: string;
}
export interface MembershipRow {
  org_id: string;
  name: string;
  role: Role;
}
export interface ApiKeyRow {
  id: string;
  org_id: string;
  name: string;
  key_prefix: string;
  key_hash: string;
  scopes: Scope[];
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}
export interface LoginSessionRow {
  id: string;
  user_id: string;
  email: string;
  token_hash: string;
  active_org_id: string | null;
  expires_at: Date;
}

export function createAuthRepo(db: Queryable) {
  return {
    async createOrg(name: string): Promise<OrgRow> {
      const r = await db.query<OrgRow>('INSERT INTO organizations (name) VALUES ($1) RETURNING id, name', [name]);
      return r.rows[0];
    },
    async getOrg(id: string): Promise<OrgRow | undefined> {
      const r = await db.query<OrgRow>('SELECT id, name FROM organizations WHERE id = $1', [id]);
      return r.rows[0];
    },
    async listOrgs(limit: number): Promise<OrgRow[]> {
      const r = await db.query<OrgRow>('SELECT id, name FROM organizations ORDER BY created_at, id LIMIT $1', [limit]);
      return r.rows;
    },
    async countOrgs(): Promise<number> {
      const r = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM organizations');
      return Number(r.rows[0].n);
    },
    /** `email` as normalizeEmail returns it; compared with the stored (ASCII) email lower-cased, on users_email_key. */
    async findUserByEmail(email: string): Promise<UserRow | undefined> {
      const r = await db.query<UserRow>('SELECT id, email, password_hash FROM users WHERE lower(email) = $1', [email]);
      return r.rows[0];
    },
    async createUser(email: string, passwordHash: string): Promise<{ id: string; email: string }> {
      const r = await db.query<{ id: string; email: string }>(
        'INSERT INTO users (email, password_hash) VALUES ($1, $2) RETURNING id, email',
        [email, passwordHash],
      );
      return r.rows[0];
    },
    async addMembership(userId: string, orgId: string, role: Role): Promise<void> {
      await db.query(
        `INSERT INTO memberships (user_id, org_id, role) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, org_id) DO UPDATE SET role = excluded.role`,
        [userId, orgId, role],
      );
    },
    async memberships(userId: string): Promise<MembershipRow[]> {
      const r = await db.query<MembershipRow>(
        `SELECT m.org_id, o.name, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
         WHERE m.user_id = $1 ORDER BY o.created_at, o.id`,
        [userId],
      );
      return r.rows;
    },
    async createLoginSession(tokenHash: string, userId: string, activeOrgId: string | null, expiresAt: Date): Promise<void> {
      await db.query('INSERT INTO login_sessions (token_hash, user_id, active_org_id, expires_at) VALUES ($1, $2, $3, $4)', [
        tokenHash,
        userId,
        activeOrgId,
        expiresAt.toISOString(),
      ]);
    },
    async findLoginSession(tokenHash: string): Promise<LoginSessionRow | undefined> {
      const r = await db.query<LoginSessionRow>(
        `SELECT s.id, s.user_id, u.email, s.token_hash, s.active_org_id, s.expires_at
         FROM login_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1`,
        [tokenHash],
      );
      return r.rows[0];
    },
    async setActiveOrg(sessionId: string, orgId: string): Promise<void> {
      await db.query('UPDATE login_sessions SET active_org_id = $2 WHERE id = $1', [sessionId, orgId]);
    },
    async deleteLoginSession(sessionId: string): Promise<void> {
      await db.query('DELETE FROM login_sessions WHERE id = $1', [sessionId]);
    },
    async deleteExpiredLoginSessions(): Promise<number> {
      return (await db.query('DELETE FROM login_sessions WHERE expires_at < now()')).rowCount;
    },
    async createApiKey(orgId: string, name: string, keyPrefix: string, keyHash: string, scopes: Scope[]): Promise<ApiKeyRow> {
      const r = await db.query<ApiKeyRow>(
        `INSERT INTO api_keys (org_id, name, key_prefix, key_hash, scopes) VALUES ($1, $2, $3, $4, $5)
         RETURNING id, org_id, name, key_prefix, key_hash, scopes, created_at, last_used_at, revoked_at`,
        [orgId, name, keyPrefix, keyHash, scopes],
      );
      return r.rows[0];
    },
    async findApiKeyByHash(keyHash: string): Promise<ApiKeyRow | undefined> {
      const r = await db.query<ApiKeyRow>(
        'SELECT id, org_id, name, key_prefix, key_hash, scopes, created_at, last_used_at, revoked_at FROM api_keys WHERE key_hash = $1',
        [keyHash],
      );
      return r.rows[0];
    },
    async listApiKeys(orgId: string): Promise<ApiKeyRow[]> {
      const r = await db.query<ApiKeyRow>(
        `SELECT id, org_id, name, key_prefix, key_hash, scopes, created_at, last_used_at, revoked_at
         FROM api_keys WHERE org_id = $1 ORDER BY created_at DESC, id`,
        [orgId],
      );
      return r.rows;
    },
    /** Revokes a key; with orgId, only a key of that org. Returns the key's org when something was revoked. */
    async revokeApiKey(id: string, orgId?: string): Promise<string | undefined> {
      const r = await db.query<{ org_id: string }>(
        `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
         WHERE id = $1 AND ($2::uuid IS NULL OR org_id = $2::uuid) RETURNING org_id`,
        [id, orgId ?? null],
      );
      return r.rows[0]?.org_id;
    },
    async touchApiKey(id: string): Promise<void> {
      await db.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [id]);
    },
    /** Of the given key ids and login session ids, those no longer valid (revoked, deleted, expired). */
    async invalidCredentials(keyIds: string[], sessionIds: string[]): Promise<Set<string>> {
      const bad = new Set<string>();
      if (keyIds.length) {
        const ok = await db.query<{ id: string }>('SELECT id FROM api_keys WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL', [keyIds]);
        const okSet = new Set(ok.rows.map((r) => r.id));
        for (const id of keyIds) if (!okSet.has(id)) bad.add(id);
      }
      if (sessionIds.length) {
        const ok = await db.query<{ id: string }>('SELECT id FROM login_sessions WHERE id = ANY($1::uuid[]) AND expires_at > now()', [sessionIds]);
        const okSet = new Set(ok.rows.map((r) => r.id));
        for (const id of sessionIds) if (!okSet.has(id)) bad.add(id);
      }
      return bad;
    },
  };
}

export type AuthRepo = ReturnType<typeof createAuthRepo>;
