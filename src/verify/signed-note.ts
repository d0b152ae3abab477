// C2SP signed-note v1.0.0 with Ed25519 (node:crypto): key ids, verifier keys (`name+hexid+base64(0x01||key)`),
// private keys in the Go note format (`PRIVATE+KEY+name+hexid+base64(0x01||seed)`), signing and opening notes.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';

const ED25519 = 0x01;
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** Most signature lines a note may carry (the spec asks verifiers to accept at least 16). */
const MAX_SIGNATURES = 16;

export class NoteError extends Error {}

/** Key names: non-empty, no Unicode spaces, no `+`. */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name);
}

/** SHA-256(name || 0x0A || 0x01 || public key)[:4], big-endian. */
export function keyId(name: string, publicKey: Uint8Array): number {
  return createHash('sha256').update(name, 'utf8').update(Buffer.of(0x0a, ED25519)).update(publicKey).digest().readUInt32BE(0);
}

/** Splits at the first n-1 `+` (the base64 key at the end may hold `+` itself). */
function splitKey(text: string, n: number): string[] | null {
  const parts = text.split('+');
  if (parts.length < n) return null;
  return [...parts.slice(0, n - 1), parts.slice(n - 1).join('+')];
}

const hex8 = (id: number) => id.toString(16).padStart(8, '0');

export interface NoteVerifier {
  name: string;
  id: number;
  publicKey: Buffer;
  /** The verifier key text: name+hexid+base64(0x01 || key). */
  text: string;
}

export interface NoteSigner {
  name: string;
  id: number;
  verifier: NoteVerifier;
  sign(text: string): Buffer;
}

function verifierOf(name: string, publicKey: Buffer): NoteVerifier {
  const id = keyId(name, publicKey);
  return { name, id, publicKey, text: `${name}+${hex8(id)}+${Buffer.concat([Buffer.of(ED25519), publicKey]).toString('base64')}` };
}

/** Parses a verifier key; throws NoteError when it is malformed, not Ed25519, or its id does not match. */
export function parseVerifierKey(text: string): NoteVerifier {
  const parts = splitKey(text.trim(), 3);
  if (!parts) throw new NoteError('a verifier key is name+hexid+base64key');
  const [name, idHex, b64] = parts;
  if (!isValidKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex)) throw new NoteError('malformed verifier key');
  const raw = Buffer.from(b64, 'base64');
  if (raw.toString('base64') !== b64 || raw.length !== 33 || raw[0] !== ED25519) throw new NoteError('the verifier key is not an Ed25519 key');
  const v = verifierOf(name, raw.subarray(1));
  if (hex8(v.id) !== idHex) throw new NoteError('the verifier key id does not match its name and key');
  return v;
}

function privateKeyOf(seed: Buffer): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

function publicKeyBytes(key: KeyObject): Buffer {
  return Buffer.from(createPublicKey(key).export({ format: 'der', type: 'spki' }).subarray(SPKI_PREFIX.length));
}

/** A signer over an Ed25519 seed (32 bytes). */
export function signerOf(name: string, seed: Buffer): NoteSigner {
  if (!isValidKeyName(name)) throw new NoteError('a key name must be non-empty, without spaces or +');
  if (seed.length !== 32) throw new NoteError('an Ed25519 seed is 32 bytes');
  const key = privateKeyOf(seed);
  const verifier = verifierOf(name, publicKeyBytes(key));
  return { name, id: verifier.id, verifier, sign: (text) => sign(null, Buffer.from(text, 'utf8'), key) };
}

/** The private key text (the format of Go's golang.org/x/mod/sumdb/note). */
export function privateKeyText(name: string, seed: Buffer): string {
  return `PRIVATE+KEY+${name}+${hex8(signerOf(name, seed).id)}+${Buffer.concat([Buffer.of(ED25519), seed]).toString('base64')}`;
}

/** Parses a private key text; throws NoteError when malformed. */
export function parsePrivateKey(text: string): NoteSigner {
  const parts = splitKey(text.trim(), 5);
  if (!parts || parts[0] !== 'PRIVATE' || parts[1] !== 'KEY') throw new NoteError('a signing key is PRIVATE+KEY+name+hexid+base64key');
  const [, , name, idHex, b64] = parts;
  const raw = Buffer.from(b64, 'base64');
  if (raw.length !== 33 || raw[0] !== ED25519) throw new NoteError('the signing key is not an Ed25519 key');
  const signer = signerOf(name, raw.subarray(1));
  if (hex8(signer.id) !== idHex) throw new NoteError('the signing key id does not match its name and key');
  return signer;
}

/** A new key pair named `name`: its private key text. */
export function generatePrivateKey(name: string): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  return privateKeyText(name, Buffer.from(der.subarray(PKCS8_PREFIX.length)));
}

/** The signed note: text (ending in a newline), a blank line, one signature line per signer. */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  if (!text.endsWith('\n')) throw new NoteError('a note text ends in a newline');
  const lines = signers.map((s) => {
    const id = Buffer.alloc(4);
    id.writeUInt32BE(s.id);
    return `\u2014 ${s.name} ${Buffer.concat([id, s.sign(text)]).toString('base64')}\n`;
  });
  return `${text}\n${lines.join('')}`;
}

/**
 * Opens a signed note: its text when a signature of one of `verifiers` verifies (signatures of unknown keys are
 * ignored); throws NoteError when the note is malformed, a known key's signature fails, or no known key signed it.
 */
export function openNote(note: string, verifiers: readonly NoteVerifier[]): { text: string; signedBy: NoteVerifier[] } {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new NoteError('a note holds no control characters but newlines');
  if (!note.endsWith('\n')) throw new NoteError('a note ends in a newline');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('a note has a blank line before its signatures');
  const text = note.slice(0, split + 1);
  const sigLines = note.slice(split + 2, -1).split('\n');
  if (sigLines.length > MAX_SIGNATURES) throw new NoteError('too many signatures');
  const signedBy: NoteVerifier[] = [];
  for (const line of sigLines) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/u.exec(line);
    if (!m) throw new NoteError('malformed signature line');
    const sig = Buffer.from(m[2], 'base64');
    if (sig.length < 5) throw new NoteError('malformed signature');
    const v = verifiers.find((k) => k.name === m[1] && k.id === sig.readUInt32BE(0));
    if (!v) continue;
    const pub = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, v.publicKey]), format: 'der', type: 'spki' });
    if (!verify(null, Buffer.from(text, 'utf8'), pub, sig.subarray(4))) throw new NoteError(`the signature of ${v.name} does not verify`);
    signedBy.push(v);
  }
  if (signedBy.length === 0) throw new NoteError('no signature of a known key');
  return { text, signedBy };
}
