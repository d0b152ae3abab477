// The key that encrypts upstream header secrets at rest (AES-256-GCM): from PROXY_SECRETS_KEY, or generated once into DATA_DIR.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** A secret as stored: base64 of the 12-byte IV, the 16-byte tag and the ciphertext. */
export interface SealedSecret {
  iv: string;
  tag: string;
  data: string;
}

export interface SecretBox {
  seal(plain: string, context: string): SealedSecret;
  /** Throws when the key is not the one the secret was sealed with, or the secret was altered. */
  open(sealed: SealedSecret, context: string): string;
}

export const SECRETS_KEY_FILE = 'proxy-secrets.key';

export class SecretsKeyError extends Error {}

function decodeKey(text: string, where: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new SecretsKeyError(`${where} must be the base64 of 32 bytes (openssl rand -base64 32)`);
  return key;
}

/**
 * The key: PROXY_SECRETS_KEY when set; else, for the embedded database only, DATA_DIR/proxy-secrets.key (created with
 * mode 0600 on first start). With DATABASE_URL set and no key, null: secret header values cannot be stored (several
 * instances must share one key, which only the operator can give them).
 */
export async function loadSecretsKey(opts: { configured?: string; dataDir: string; embedded: boolean }): Promise<Buffer | null> {
  if (opts.configured) return decodeKey(opts.configured, 'PROXY_SECRETS_KEY');
  if (!opts.embedded) return null;
  const file = path.join(opts.dataDir, SECRETS_KEY_FILE);
  try {
    return decodeKey(await readFile(file, 'utf8'), file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(opts.dataDir, { recursive: true });
  const key = randomBytes(32);
  try {
    // 'wx': a concurrent first start cannot overwrite a key another one already used.
    await writeFile(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return decodeKey(await readFile(file, 'utf8'), file);
    throw err;
  }
}

/** Seals with a fresh IV per value; `context` (org and server) is authenticated, so a sealed value cannot be moved. */
export function createSecretBox(key: Buffer): SecretBox {
  return {
    seal(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context));
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return { iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
    },
    open(sealed, context) {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}
