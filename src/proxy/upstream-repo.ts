// SQL for the upstream MCP servers an organization registers and its proxy settings.
import type { Queryable } from '../db/db.js';
import type { SealedSecret } from './secrets-key.js';

/** A header sent upstream, as stored: a plain value, or a sealed secret. */
export type StoredHeader = { name: string; value: string } | { name: string; secret: SealedSecret };

export interface UpstreamRow {
  serverId: string;
  url: string;
  headers: StoredHeader[];
  timeoutMs: number;
  createdAt: string;
  updatedAt: string;
}

export type StoreDownPolicy = 'refuse' | 'forward';

interface DbRow {
  server_id: string;
  url: string;
  headers: StoredHeader[] | string;
  timeout_ms: number;
  created_at: Date | string;
  updated_at: Date | string;
}

const COLUMNS = 'server_id, url, headers, timeout_ms, created_at, updated_at';

function toRow(r: DbRow): UpstreamRow {
  return {
    serverId: r.server_id,
    url: r.url,
    headers: typeof r.headers === 'string' ? (JSON.parse(r.headers) as StoredHeader[]) : r.headers,
    timeoutMs: Number(r.timeout_ms),
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
}

export async function listUpstreams(db: Queryable, orgId: string, limit: number): Promise<UpstreamRow[]> {
  const r = await db.query<DbRow>(`SELECT ${COLUMNS} FROM proxy_servers WHERE org_id = $1 ORDER BY server_id LIMIT $2`, [orgId, limit]);
  return r.rows.map(toRow);
}

export async function getUpstream(db: Queryable, orgId: string, serverId: string, forUpdate = false): Promise<UpstreamRow | undefined> {
  const r = await db.query<DbRow>(`SELECT ${COLUMNS} FROM proxy_servers WHERE org_id = $1 AND server_id = $2${forUpdate ? ' FOR UPDATE' : ''}`, [orgId, serverId]);
  return r.rows[0] ? toRow(r.rows[0]) : undefined;
}

export async function countUpstreams(db: Queryable, orgId: string): Promise<number> {
  const r = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM proxy_servers WHERE org_id = $1', [orgId]);
  return Number(r.rows[0].n);
}

/** Inserts or replaces a server; `created` tells which. */
export async function putUpstream(tx: Queryable, orgId: string, u: { serverId: string; url: string; headers: StoredHeader[]; timeoutMs: number }): Promise<{ row: UpstreamRow; created: boolean }> {
  const r = await tx.query<DbRow & { created: boolean }>(
    `INSERT INTO proxy_servers (org_id, server_id, url, headers, timeout_ms) VALUES ($1, $2, $3, $4::jsonb, $5)
     ON CONFLICT (org_id, server_id) DO UPDATE SET url = excluded.url, headers = excluded.headers, timeout_ms = excluded.timeout_ms, updated_at = now()
     RETURNING ${COLUMNS}, (xmax = 0) AS created`,
    [orgId, u.serverId, u.url, JSON.stringify(u.headers), u.timeoutMs],
  );
  return { row: toRow(r.rows[0]), created: Boolean(r.rows[0].created) };
}

export async function deleteUpstream(db: Queryable, orgId: string, serverId: string): Promise<boolean> {
  const r = await db.query('DELETE FROM proxy_servers WHERE org_id = $1 AND server_id = $2', [orgId, serverId]);
  return r.rowCount > 0;
}

/**
 * Serializes changes to one organization's proxy configuration (its server and rule counts are checked under it), with
 * a transaction-scoped advisory lock: the organization's row, whose lock orders event appends, is left alone.
 */
export async function lockOrgProxyConfig(tx: Queryable, orgId: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('audit-stream:proxy-config'), hashtext($1))", [orgId]);
}

export async function getStoreDownPolicy(db: Queryable, orgId: string): Promise<StoreDownPolicy> {
  const r = await db.query<{ proxy_store_down: StoreDownPolicy }>('SELECT proxy_store_down FROM organizations WHERE id = $1', [orgId]);
  return r.rows[0]?.proxy_store_down ?? 'refuse';
}

export async function setStoreDownPolicy(db: Queryable, orgId: string, policy: StoreDownPolicy): Promise<void> {
  await db.query('UPDATE organizations SET proxy_store_down = $2 WHERE id = $1', [orgId, policy]);
}
