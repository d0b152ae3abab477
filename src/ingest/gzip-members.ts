// Decodes data holding several gzip members (concatenated, or separated by newlines) one member at a time, bounded.
import { crc32, inflateRaw, type ZlibOptions } from 'node:zlib';
import { isGzip } from './compression.js';

/** Most gzip members decoded from one piece of data; the rest is reported as one undecodable part. */
export const MAX_GZIP_MEMBERS = 1_000;

export type GzipMember = { ok: true; bytes: Buffer } | { ok: false; reason: string; tooLarge?: boolean };

const FHCRC = 2;
const FEXTRA = 4;
const FNAME = 8;
const FCOMMENT = 16;

function isSpace(b: number): boolean {
  return b === 0x0a || b === 0x0d || b === 0x20 || b === 0x09;
}

/** Where the deflate data of the member whose header starts at `pos` begins (RFC 1952); null when the header is cut. */
function deflateStart(bytes: Uint8Array, pos: number): number | null {
  if (pos + 10 > bytes.length || bytes[pos + 2] !== 8) return null;
  const flags = bytes[pos + 3];
  let p = pos + 10;
  if (flags & FEXTRA) {
    if (p + 2 > bytes.length) return null;
    p += 2 + (bytes[p] | (bytes[p + 1] << 8));
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    while (p < bytes.length && bytes[p] !== 0) p++;
    p++;
  }
  if (flags & FHCRC) p += 2;
  return p <= bytes.length ? p : null;
}

function inflate(data: Uint8Array, maxOutputLength: number): Promise<{ ok: true; bytes: Buffer; consumed: number } | { ok: false; error: NodeJS.ErrnoException }> {
  const opts = { info: true, maxOutputLength: Math.max(1, maxOutputLength) } as ZlibOptions & { info: true };
  return new Promise((resolve) => {
    inflateRaw(data, opts, (err, result) => {
      if (err) resolve({ ok: false, error: err });
      else {
        const r = result as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
        resolve({ ok: true, bytes: r.buffer, consumed: r.engine.bytesWritten });
      }
    });
  });
}

/** The next gzip header at or after `from`, or -1. */
function nextMember(bytes: Uint8Array, from: number): number {
  for (let i = from; i + 2 < bytes.length; i++) if (bytes[i] === 0x1f && bytes[i + 1] === 0x8b && bytes[i + 2] === 8) return i;
  return -1;
}

/**
 * Each gzip member of `bytes`, in order: its decompressed bytes, or why it could not be decoded. Whitespace between
 * members is skipped; a corrupt member does not stop the ones after it (decoding resumes at the next gzip header).
 * All members together decompress to at most `maxBytes`; past that, the rest is one part marked `tooLarge`.
 */
export async function gunzipMembers(bytes: Uint8Array, maxBytes: number): Promise<GzipMember[]> {
  const out: GzipMember[] = [];
  let remaining = maxBytes;
  let pos = 0;
  while (pos < bytes.length) {
    while (pos < bytes.length && isSpace(bytes[pos])) pos++;
    if (pos >= bytes.length) break;
    if (out.length >= MAX_GZIP_MEMBERS) {
      out.push({ ok: false, reason: `more than ${MAX_GZIP_MEMBERS} gzip members in one record` });
      break;
    }
    if (!isGzip(bytes.subarray(pos))) {
      out.push({ ok: false, reason: 'data after a gzip member is not gzip' });
      const next = nextMember(bytes, pos + 1);
      if (next < 0) break;
      pos = next;
      continue;
    }
    const start = deflateStart(bytes, pos);
    const inflated = start === null ? null : await inflate(bytes.subarray(start), remaining);
    if (start === null || inflated === null || !inflated.ok) {
      const tooLarge = inflated !== null && !inflated.ok && (inflated.error.code === 'ERR_BUFFER_TOO_LARGE' || inflated.error instanceof RangeError);
      if (tooLarge) {
        out.push({ ok: false, reason: `decompressed data exceeds ${maxBytes} bytes`, tooLarge: true });
        break;
      }
      out.push({ ok: false, reason: `invalid gzip data: ${inflated && !inflated.ok ? inflated.error.message : 'truncated header'}` });
      const next = nextMember(bytes, pos + 1);
      if (next < 0) break;
      pos = next;
      continue;
    }
    const trailer = start + inflated.consumed;
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (trailer + 8 > bytes.length || view.readUInt32LE(trailer) !== crc32(inflated.bytes) || view.readUInt32LE(trailer + 4) !== inflated.bytes.length % 2 ** 32) {
      out.push({ ok: false, reason: 'invalid gzip data: truncated or failed its checksum' });
      const next = nextMember(bytes, trailer);
      if (next < 0) break;
      pos = next;
      continue;
    }
    out.push({ ok: true, bytes: inflated.bytes });
    remaining -= inflated.bytes.length;
    pos = trailer + 8;
  }
  return out;
}
