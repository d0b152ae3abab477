// The COPY row sink: rows in Postgres's binary COPY format (no escaping, no parsing of numbers or times), sent in
// chunks as they are made, so Postgres stores the first while the service encodes the next.
import type { Transaction } from '../../db/db.js';
import { ROW_COLUMNS, type EventRow, type RowSink } from './row-sink.js';

/** Bytes of one chunk of the COPY stream before it is handed on (a larger row makes a larger chunk). */
export const COPY_CHUNK_BYTES = 256 * 1024;
const SIGNATURE = Buffer.from([0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00]);
/** 2000-01-01T00:00:00Z, Postgres's epoch for timestamps, in Unix ms. */
const PG_EPOCH_MS = 946_684_800_000;
const TARGET = `audit_events (${ROW_COLUMNS.join(', ')})`;

/** Appends binary COPY fields to buffers of about COPY_CHUNK_BYTES. */
class ChunkWriter {
  private buf = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
  private at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }

  /** The bytes written so far, when there are at least COPY_CHUNK_BYTES of them (or `all`); a fresh buffer follows. */
  take(all = false): Buffer | null {
    if (this.at === 0 || (!all && this.at < COPY_CHUNK_BYTES)) return null;
    const out = this.buf.subarray(0, this.at);
    this.buf = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
    this.at = 0;
    return out;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.at);
    this.at += b.length;
  }

  int16(n: number): void {
    this.room(2);
    this.at = this.buf.writeInt16BE(n, this.at);
  }

  int32(n: number): void {
    this.room(4);
    this.at = this.buf.writeInt32BE(n, this.at);
  }

  /** A 64-bit integer that is exactly a double (|n| < 2^53). */
  int64(n: number): void {
    this.room(8);
    const hi = Math.floor(n / 0x1_0000_0000);
    this.at = this.buf.writeInt32BE(hi, this.at);
    this.at = this.buf.writeUInt32BE(n - hi * 0x1_0000_0000, this.at);
  }

  null(): void {
    this.int32(-1);
  }

  /** A field of `8`: an int8 (bigint) value. */
  bigint(n: number): void {
    this.int32(8);
    this.int64(n);
  }

  /** A timestamptz field: microseconds since Postgres's epoch. */
  time(ms: number): void {
    this.int32(8);
    this.int64((ms - PG_EPOCH_MS) * 1000);
  }

  /** A text, json or (with `prefix` 1, the jsonb format version) jsonb field as UTF-8. */
  text(s: string | null, prefix?: number): void {
    if (s === null) return this.null();
    const extra = prefix === undefined ? 0 : 1;
    this.room(4 + extra + s.length * 3);
    const lengthAt = this.at;
    this.at += 4;
    if (prefix !== undefined) this.buf[this.at++] = prefix;
    const n = this.buf.write(s, this.at, 'utf8');
    this.at += n;
    this.buf.writeInt32BE(n + extra, lengthAt);
  }

  int4(n: number | null): void {
    if (n === null) return this.null();
    this.int32(4);
    this.int32(n);
  }

  bytea(b: Uint8Array | null): void {
    if (b === null) return this.null();
    this.int32(b.length);
    this.bytes(b);
  }
}

/** The binary COPY stream of `rows` of `orgId`, in chunks. */
export function* copyChunks(orgId: string, rows: readonly EventRow[]): Generator<Buffer> {
  const org = Buffer.from(orgId.replaceAll('-', ''), 'hex');
  const w = new ChunkWriter();
  w.bytes(SIGNATURE);
  w.int32(0); // flags
  w.int32(0); // header extension length
  for (const row of rows) {
    const r = row.record;
    w.int16(ROW_COLUMNS.length);
    w.int32(16);
    w.bytes(org);
    w.bigint(r.seq);
    w.time(row.occurredAtMs);
    w.time(row.receivedAtMs);
    w.text(r.source);
    w.text(r.type);
    w.text(r.serverId);
    w.text(r.sessionId);
    w.text(r.toolName);
    w.text(r.action);
    w.int4(r.latencyMs);
    w.text(row.payload);
    w.text(row.metadata, 1);
    w.bytea(row.dedupeDigest);
    w.int4(row.contextId);
    const chunk = w.take();
    if (chunk) yield chunk;
  }
  w.int16(-1);
  yield w.take(true)!;
}

export const copySink: RowSink = {
  name: 'copy',
  async write(tx: Transaction, orgId: string, rows: readonly EventRow[]): Promise<void> {
    if (rows.length) await tx.copyIn(TARGET, copyChunks(orgId, rows));
  },
};
