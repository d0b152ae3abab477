// Bounded gzip sniffing and inflation plus strict base64 decoding, for bodies and records that may arrive compressed.
import { gunzip } from 'node:zlib';

/** True when the bytes start with the gzip magic number 1f 8b. */
export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

export type InflateResult = { ok: true; bytes: Buffer } | { ok: false; reason: 'too_large' | 'corrupt'; message: string };

/** Inflates gzip data, stopping once the output would exceed `maxBytes` (so a gzip bomb costs at most that much memory). */
export function gunzipBounded(bytes: Uint8Array, maxBytes: number): Promise<InflateResult> {
  return new Promise((resolve) => {
    gunzip(bytes, { maxOutputLength: Math.max(1, maxBytes) }, (err, out) => {
      if (!err) resolve({ ok: true, bytes: out });
      else if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
        resolve({ ok: false, reason: 'too_large', message: `decompressed data exceeds ${maxBytes} bytes` });
      else resolve({ ok: false, reason: 'corrupt', message: `invalid gzip data: ${err.message}` });
    });
  });
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64_URL = /^[A-Za-z0-9_-]*={0,2}$/;

/** Decodes standard (or URL-safe) base64, whitespace allowed; null when the text is not base64. */
export function decodeBase64(text: string): Buffer | null {
  const compact = /\s/.test(text) ? text.replace(/\s+/g, '') : text;
  if (compact.length % 4 === 1) return null;
  if (BASE64.test(compact)) return Buffer.from(compact, 'base64');
  if (BASE64_URL.test(compact)) return Buffer.from(compact, 'base64url');
  return null;
}
