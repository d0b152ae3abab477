// First start of an empty embedded database: a Demo organization, an admin login and an all-scopes API key.
import { randomBytes } from 'node:crypto';
import type { AuthRepo } from './auth-repo.js';
import type { ApiKeyService } from './api-keys.js';
import { hashPassword } from './passwords.js';
import { SCOPES } from './tokens.js';

export interface DemoCredentials {
  organizationId: string;
  email: string;
  password: string;
  apiKey: string;
}

/** Creates the demo account when there is no organization yet; returns the credentials to print once, or null. */
export async function seedDemo(repo: AuthRepo, keys: ApiKeyService): Promise<DemoCredentials | null> {
  if ((await repo.countOrgs()) > 0) return null;
  const org = await repo.createOrg('Demo');
  const email = 'admin@demo.local';
  const password = randomBytes(12).toString('base64url');
  const user = await repo.createUser(email, await hashPassword(password));
  await repo.addMembership(user.id, org.id, 'admin');
  const key = await keys.issue(org.id, 'demo key', [...SCOPES]);
  return { organizationId: org.id, email, password, apiKey: key.key };
}
