// Issuing and revoking API keys: the key is shown once, only its digest is stored; revocation closes open streams.
import type { ControlChannel } from '../bus/control-channel.js';
import type { AuthRepo, ApiKeyRow } from './auth-repo.js';
import { newApiKey, sha256Hex, type Scope } from './tokens.js';

export function publicKey(row: ApiKeyRow) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.key_prefix,
    scopes: row.scopes,
    createdAt: new Date(row.created_at).toISOString(),
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
    revokedAt: row.revoked_at ? new Date(row.revoked_at).toISOString() : null,
  };
}

export function createApiKeyService(repo: AuthRepo, control: Pick<ControlChannel, 'publish'>) {
  return {
    async issue(orgId: string, name: string, scopes: Scope[]) {
      const key = newApiKey();
      const row = await repo.createApiKey(orgId, name, key.slice(0, 12), sha256Hex(key), [...new Set(scopes)]);
      return { ...publicKey(row), key };
    },
    /** Revokes; returns false when no such key (in that org, when given). */
    async revoke(id: string, orgId?: string): Promise<boolean> {
      const revokedOrg = await repo.revokeApiKey(id, orgId);
      if (!revokedOrg) return false;
      await control.publish({ kind: 'revoke_key', keyId: id }).catch(() => undefined);
      return true;
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
