// What the log tests share: events to append, the leaves recomputed from stored events, the root over stored tiles.
import { apiEventColumnsSql } from '../../src/audit/byte-pages.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NewAuditEvent } from '../../src/audit/audit-types.js';
import { toAuditEventRow, type AuditEventDbRow } from '../../src/audit/audit-repo.js';
import type { Queryable } from '../../src/db/db.js';
import { generatePrivateKey } from '../../src/verify/signed-note.js';
import { recordLeafHash } from '../../src/verify/merkle-append.js';
import { withStoredNodes } from '../../src/verify/stored-nodes.js';
import { rootAt } from '../../src/verify/tree.js';

export const logEvent = (key: string, extra: Partial<NewAuditEvent> = {}): NewAuditEvent => ({
  type: 'tool_call', source: 'raw', occurredAt: new Date(1714558800000), serverId: 'srv', toolName: 't', action: 'allow', latencyMs: 1, metadata: { n: key, nested: { a: [1, 2.5, 'x'] } }, dedupeKey: key, ...extra,
});

export const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** The leaf hash of every stored event of the organization, in seq order, recomputed from the rows. */
export async function storedLeaves(db: Queryable, orgId: string): Promise<{ seq: number; leaf: Buffer }[]> {
  const r = await db.query<AuditEventDbRow>(`SELECT ${apiEventColumnsSql('e')} FROM audit_events e WHERE org_id = $1 ORDER BY seq`, [orgId]);
  return r.rows.map((row) => {
    const rec = toAuditEventRow(row);
    return { seq: rec.seq, leaf: recordLeafHash(rec) };
  });
}

export function storedRoot(db: Queryable, orgId: string, size: number): Promise<Buffer> {
  return withStoredNodes(db, orgId, (nodes) => rootAt(size, nodes));
}

export async function logSizeOf(db: Queryable, orgId: string): Promise<number> {
  const r = await db.query<{ size: string }>('SELECT size FROM merkle_logs WHERE org_id = $1', [orgId]);
  return r.rows.length ? Number(r.rows[0].size) : 0;
}

/** A signing key file (named localhost) for instances that share one key, as SIGNING_KEY_FILE. */
export function signingKeyFile(name = 'localhost'): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'audit-stream-key-')), 'log-signing.key');
  writeFileSync(file, generatePrivateKey(name) + '\n', { mode: 0o600 });
  return file;
}
