// The row sink: how the event log's rows reach audit_events, inside the log's transaction. Two implementations:
// insert-sink (jsonb_to_recordset statements) and copy-sink (binary COPY); EVENT_LOG_SINK chooses.
import type { AuditEventRow } from '../../contract/api-rows.js';
import type { Transaction } from '../../db/db.js';

/** One row of audit_events: the canonical record and what only storage needs. */
export interface EventRow {
  record: AuditEventRow;
  /** record.occurredAt and record.receivedAt in ms since the epoch (the binary COPY writes them as numbers). */
  occurredAtMs: number;
  receivedAtMs: number;
  /** JSON text of the stream payload of an anomaly or session_update (read by replay and stats), else null. */
  payload: string | null;
  /** JSON text of the metadata the row keeps: record.metadata, or its own part when contextId names the shared part. */
  metadata: string;
  /** First 16 bytes of the SHA-256 of the sender's identity (dedupe), or null when the sender gave none. */
  dedupeDigest: Buffer | null;
  /** The organization's audit_contexts row holding the shared part of the metadata, or null. */
  contextId: number | null;
}

export type RowSinkName = 'insert' | 'copy';

/**
 * The sink EVENT_LOG_SINK names; `auto`: the faster one on the backend, as measured by `npm run bench -- ingest`
 * (docs/performance.md): COPY on Postgres and on PGlite.
 */
export function rowSinkFor(setting: RowSinkName | 'auto', backend: 'postgres' | 'pglite'): RowSinkName {
  if (setting !== 'auto') return setting;
  return backend === 'postgres' ? 'copy' : 'copy';
}

export interface RowSink {
  readonly name: RowSinkName;
  /** Appends `rows` (seq order) of `orgId` to audit_events in `tx`; all of them or, by throwing, none. */
  write(tx: Transaction, orgId: string, rows: readonly EventRow[]): Promise<void>;
}

/** The columns every sink writes, in this order. */
export const ROW_COLUMNS = [
  'org_id', 'seq', 'occurred_at', 'received_at', 'source', 'type', 'server_id', 'session_id', 'tool_name', 'action', 'latency_ms', 'payload', 'metadata', 'dedupe_key', 'context_id',
] as const;
