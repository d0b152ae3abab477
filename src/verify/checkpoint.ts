// C2SP tlog-checkpoint v1.0.0 bodies (origin, tree size, base64 root hash, one line each) and the origin of an
// organization's log: `<PUBLIC_HOST>/orgs/<orgId>`.
import { HASH_SIZE } from './tree.js';

export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
}

export function originOf(publicHost: string, orgId: string): string {
  return `${publicHost}/orgs/${orgId}`;
}

export function checkpointText(c: Checkpoint): string {
  return `${c.origin}\n${c.size}\n${c.root.toString('base64')}\n`;
}

export class CheckpointFormatError extends Error {}

/** Parses a checkpoint body (a signed note's text); extension lines after the third are allowed and ignored. */
export function parseCheckpointText(text: string): Checkpoint {
  const lines = text.split('\n');
  if (lines.length < 4 || lines[lines.length - 1] !== '') throw new CheckpointFormatError('a checkpoint has origin, size and root hash lines, each ending in a newline');
  const [origin, sizeText, rootText] = lines;
  if (!origin) throw new CheckpointFormatError('a checkpoint names its origin');
  if (!/^(0|[1-9]\d{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) throw new CheckpointFormatError('malformed tree size');
  const root = Buffer.from(rootText, 'base64');
  if (root.length !== HASH_SIZE || root.toString('base64') !== rootText) throw new CheckpointFormatError('malformed root hash');
  return { origin, size: Number(sizeText), root };
}
