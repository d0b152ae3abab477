// Someone with database access changes the history after the fact (a field, a deleted row, an inserted one, two
// swapped, a rewritten checkpoint, the tail truncated and appended again): the offline verifier and the proof
// endpoints fail naming the first bad seq; an untouched history verifies.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bearer, createOrg, http, type TestOrg } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';
import { checkExport, EXIT, exportLeaves } from '../../src/verify/export-check.js';
import { parseVerifierKey } from '../../src/verify/signed-note.js';
import { httpTiles } from '../../src/verify/tile-sources.js';
import { logEvent, signingKeyFile, upTo } from './log-helpers.js';

const N = 300;
const BAD = 137;
const COLUMNS = 'org_id, seq, occurred_at, received_at, source, type, server_id, session_id, tool_name, action, latency_ms, payload, metadata, context_id';

describe.each(backendNames)('tampering in the database is found (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { SIGNING_KEY_FILE: signingKeyFile(), ANOMALY_MIN_RATE: '1000000000', CHECKPOINT_INTERVAL_MS: '3600000', CHECKPOINT_EVERY_EVENTS: '100000000' });
  const sql = (text: string, params: unknown[] = []) => app.ctx.db.query(text, params);

  /** An organization with N events and a checkpoint of them; returns it and its checkpoint note. */
  async function history(): Promise<{ org: TestOrg; note: string }> {
    const org = await createOrg(app.url);
    for (let r = 0; r < 3; r++) await app.ctx.eventLog.append(org.id, upTo(N / 3).map((i) => logEvent(`raw:id:t-${r}-${i}`, { metadata: { r, i, text: `call ${r}/${i}` } })));
    const c = await app.ctx.verifiableLog.checkpointer!.issue(org.id);
    expect(c?.size).toBe(N);
    return { org, note: c!.note };
  }

  async function exported(org: TestOrg): Promise<string> {
    const r = await fetch(`${app.url}/api/v1/audit-events/export`, { headers: bearer(org.key) });
    expect(r.status).toBe(200);
    return r.text();
  }

  async function verify(org: TestOrg, note: string) {
    const text = await exported(org);
    async function* lines() {
      yield* text.split('\n');
    }
    return checkExport(await exportLeaves(lines()), note, [parseVerifierKey(app.ctx.verifiableLog.verifierKey!)], httpTiles(`${app.url}/api/v1/log`, org.key));
  }

  const inclusion = (org: TestOrg, seq: number) => http(`${app.url}/api/v1/log/proof/inclusion?seq=${seq}&size=${N}`, { headers: bearer(org.key) });

  async function expectFoundAt(org: TestOrg, note: string, seq: number) {
    const r = await verify(org, note);
    expect(r, r.message).toMatchObject({ exitCode: EXIT.differs, firstBadSeq: seq });
    const proof = await inclusion(org, seq);
    expect(proof.status).toBe(409);
    expect(proof.body).toMatchObject({ code: 'log_mismatch', firstBadSeq: seq });
    expect((await inclusion(org, seq - 1)).status).toBe(200);
  }

  it('verifies an untouched history, with the bin as well (exit 0), and serves proofs of it', async () => {
    const { org, note } = await history();
    expect(await verify(org, note)).toMatchObject({ exitCode: EXIT.verified, firstBadSeq: null, verified: { from: 1, to: N } });
    expect((await inclusion(org, BAD)).body).toMatchObject({ seq: BAD, treeSize: N, eventStored: true });
    const dir = mkdtempSync(path.join(tmpdir(), 'audit-stream-verify-'));
    writeFileSync(path.join(dir, 'events.ndjson'), await exported(org));
    writeFileSync(path.join(dir, 'checkpoint'), note);
    // Run apart (never synchronously: the server answering its tile reads lives in this process).
    const bin = (exportFile: string) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const args = ['--import', 'tsx', 'src/cli/audit-stream.ts', 'verify', '--export', exportFile, '--checkpoint', path.join(dir, 'checkpoint'), '--key', app.ctx.verifiableLog.verifierKey!, '--tiles', `${app.url}/api/v1/log`, '--json'];
        execFile(process.execPath, args, { encoding: 'utf8', env: { ...process.env, AUDIT_STREAM_API_KEY: org.key } }, (err, stdout, stderr) =>
          resolve({ status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
        );
      });
    const ok = await bin(path.join(dir, 'events.ndjson'));
    expect(ok.status, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ exitCode: 0, verified: { from: 1, to: N } });
    await sql(`UPDATE audit_events SET action = 'deny' WHERE org_id = $1 AND seq = $2`, [org.id, BAD]);
    writeFileSync(path.join(dir, 'events.ndjson'), await exported(org));
    const bad = await bin(path.join(dir, 'events.ndjson'));
    expect(bad.status).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ exitCode: 1, firstBadSeq: BAD });
  }, 60_000);

  it('finds a changed field', async () => {
    const { org, note } = await history();
    await sql(`UPDATE audit_events SET metadata = jsonb_set(metadata, '{text}', '"edited"') WHERE org_id = $1 AND seq = $2`, [org.id, BAD]);
    await expectFoundAt(org, note, BAD);
  });

  it('finds a deleted row', async () => {
    const { org, note } = await history();
    await sql('DELETE FROM audit_events WHERE org_id = $1 AND seq = $2', [org.id, BAD]);
    await expectFoundAt(org, note, BAD);
  });

  it('finds an inserted row (the seqs after it moved up by one)', async () => {
    const { org, note } = await history();
    await sql('UPDATE audit_events SET seq = -seq - 1 WHERE org_id = $1 AND seq >= $2', [org.id, BAD]);
    await sql('UPDATE audit_events SET seq = -seq WHERE org_id = $1 AND seq < 0', [org.id]);
    await sql(`INSERT INTO audit_events (${COLUMNS}) SELECT ${COLUMNS.replace('seq,', '$2::bigint,').replace('tool_name,', "'inserted',")} FROM audit_events WHERE org_id = $1 AND seq = $2 + 1`, [org.id, BAD]);
    await expectFoundAt(org, note, BAD);
  });

  it('finds two swapped rows', async () => {
    const { org, note } = await history();
    await sql('UPDATE audit_events SET seq = -1 WHERE org_id = $1 AND seq = $2', [org.id, BAD]);
    await sql('UPDATE audit_events SET seq = $2 WHERE org_id = $1 AND seq = $3', [org.id, BAD, BAD + 3]);
    await sql('UPDATE audit_events SET seq = $2 WHERE org_id = $1 AND seq = -1', [org.id, BAD + 3]);
    // (BAD + 3 now holds BAD's event, BAD holds BAD + 3's.)
    await expectFoundAt(org, note, BAD);
  });

  it('finds the tail truncated and appended again with other events', async () => {
    const { org, note } = await history();
    await sql('DELETE FROM audit_events WHERE org_id = $1 AND seq >= $2', [org.id, BAD]);
    for (let seq = BAD; seq <= N; seq++) {
      await sql(`INSERT INTO audit_events (${COLUMNS}) SELECT ${COLUMNS.replace('seq,', '$2::bigint,').replace('metadata,', `'{"rewritten": true}'::jsonb,`)} FROM audit_events WHERE org_id = $1 AND seq = 1`, [org.id, seq]);
    }
    await expectFoundAt(org, note, BAD);
  });

  it('finds a rewritten checkpoint: it does not verify, and the proofs against its size are refused', async () => {
    const { org, note } = await history();
    const forged = note.replace(/\n(\d+)\n/, `\n${N}\n`).replace(/\n([A-Za-z0-9+/=]{44})\n/, `\n${Buffer.alloc(32, 7).toString('base64')}\n`);
    expect(forged).not.toBe(note);
    await expect(sql('UPDATE merkle_checkpoints SET note = $3 WHERE org_id = $1 AND size = $2', [org.id, N, forged])).rejects.toThrow(/never rewritten/);
    await sql('ALTER TABLE merkle_checkpoints DISABLE TRIGGER merkle_checkpoints_unchanged');
    try {
      await sql('UPDATE merkle_checkpoints SET note = $3, root = $4 WHERE org_id = $1 AND size = $2', [org.id, N, forged, Buffer.alloc(32, 7)]);
    } finally {
      await sql('ALTER TABLE merkle_checkpoints ENABLE TRIGGER merkle_checkpoints_unchanged');
    }
    const served = await http(`${app.url}/api/v1/log/checkpoint`, { headers: bearer(org.key) });
    expect(await verify(org, served.body as string)).toMatchObject({ exitCode: EXIT.badCheckpoint });
    expect(await verify(org, note)).toMatchObject({ exitCode: EXIT.verified });
    const proof = await inclusion(org, BAD);
    expect(proof.status).toBe(409);
    expect(proof.body).toMatchObject({ code: 'log_mismatch' });
    // No new checkpoint is signed over a history that does not extend the latest one that verifies... or at all.
    await app.ctx.eventLog.append(org.id, [logEvent('raw:id:after-forgery')]);
    expect(await app.ctx.verifiableLog.checkpointer!.issue(org.id)).toBeNull();
  });
});
