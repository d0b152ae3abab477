// The checkpoint signing key: from SIGNING_KEY_FILE, or for the embedded database created once in DATA_DIR.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generatePrivateKey, parsePrivateKey, type NoteSigner } from './signed-note.js';

export const SIGNING_KEY_FILE = 'log-signing.key';

export class SigningKeyError extends Error {}

async function readKey(file: string): Promise<NoteSigner> {
  try {
    return parsePrivateKey(await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code) throw err;
    throw new SigningKeyError(`${file}: ${(err as Error).message}`);
  }
}

/**
 * The signer: SIGNING_KEY_FILE when set; else, for the embedded database only, DATA_DIR/log-signing.key (created with
 * mode 0600, named after PUBLIC_HOST, on first start; `created` tells the caller to print its verifier key). With
 * DATABASE_URL set and no file, null: several instances must share one key, which only the operator can give them.
 */
export async function loadSigningKey(opts: { file?: string; dataDir: string; embedded: boolean; name: string }): Promise<{ signer: NoteSigner; created: boolean } | null> {
  if (opts.file) return { signer: await readKey(opts.file), created: false };
  if (!opts.embedded) return null;
  const file = path.join(opts.dataDir, SIGNING_KEY_FILE);
  try {
    return { signer: await readKey(file), created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(opts.dataDir, { recursive: true });
  const text = generatePrivateKey(opts.name);
  try {
    // 'wx': a concurrent first start cannot overwrite a key another one already used.
    await writeFile(file, text + '\n', { mode: 0o600, flag: 'wx' });
    return { signer: parsePrivateKey(text), created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { signer: await readKey(file), created: false };
    throw err;
  }
}
