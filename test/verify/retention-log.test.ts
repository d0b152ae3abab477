// Retention removes old events but keeps what proofs need: the checkpoints, the subtree tiles, and the leaf tiles of
// kept events and of checkpoints' edges. An export that starts after the cut verifies; proofs of kept events and
// between checkpoints across the removed range still verify; a change after the cut is still named.
import { describe, expect, it } from 'vitest';
import { bearer, createOrg, http } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';
import { checkExport, EXIT, exportLeaves } from '../../src/verify/export-check.js';
import { parseVerifierKey } from '../../src/verify/signed-note.js';
import { httpTiles } from '../../src/verify/tile-sources.js';
import { verifyConsistency, verifyInclusion } from '../../src/verify/tree.js';
import { logEvent, signingKeyFile, upTo } from './log-helpers.js';

describe.each(backendNames)('retention keeps the log\'s proofs whole (%s)', (backendName) => {
  const { app } = suiteApp(backendName, {
    SIGNING_KEY_FILE: signingKeyFile(),
    ANOMALY_MIN_RATE: '1000000000',
    CHECKPOINT_INTERVAL_MS: '3600000',
    CHECKPOINT_EVERY_EVENTS: '100000000',
    AUDIT_RETENTION_DAYS: '30',
    RETENTION_INTERVAL_MS: '86400000',
    RETENTION_BATCH_ROWS: '400',
  });

  it('verifies an export starting after the cut, and proves kept events and checkpoints across the removed range', async () => {
    const org = await createOrg(app.url);
    const notes = new Map<number, string>();
    for (const n of [300, 212, 588]) {
      const from = notes.size ? [...notes.keys()].pop()! : 0;
      await app.ctx.eventLog.append(org.id, upTo(n).map((i) => logEvent(`raw:id:r-${from + i}`)));
      const c = (await app.ctx.verifiableLog.checkpointer!.issue(org.id))!;
      notes.set(c.size, c.note);
    }
    expect([...notes.keys()]).toEqual([300, 512, 1100]);
    await app.ctx.db.query(`UPDATE audit_events SET received_at = now() - interval '40 days' WHERE org_id = $1 AND seq <= 1000`, [org.id]);
    await app.ctx.retention.runOnce();
    const kept = await app.ctx.db.query<{ lo: string; n: number }>('SELECT min(seq) AS lo, count(*)::int AS n FROM audit_events WHERE org_id = $1', [org.id]);
    expect({ lo: Number(kept.rows[0].lo), n: kept.rows[0].n }).toEqual({ lo: 1001, n: 100 });
    // Leaf tiles 0 and 2 held only removed events; tile 1 holds checkpoint 300's edge; tile 3 holds kept events.
    const leafTiles = await app.ctx.db.query<{ idx: string }>('SELECT idx FROM merkle_tile_hashes WHERE org_id = $1 AND level = 0 ORDER BY idx', [org.id]);
    expect(leafTiles.rows.map((r) => Number(r.idx))).toEqual([1, 3, 4]);

    const key = parseVerifierKey(app.ctx.verifiableLog.verifierKey!);
    const tiles = httpTiles(`${app.url}/api/v1/log`, org.key);
    const verifyExport = async () => {
      const text = await (await fetch(`${app.url}/api/v1/audit-events/export`, { headers: bearer(org.key) })).text();
      return checkExport(await exportLeaves((async function* () { yield* text.split('\n'); })()), notes.get(1100)!, [key], tiles);
    };
    expect(await verifyExport()).toMatchObject({ exitCode: EXIT.verified, verified: { from: 1001, to: 1100 } });

    const kept1001 = await http(`${app.url}/api/v1/log/proof/inclusion?seq=1001&size=1100`, { headers: bearer(org.key) });
    expect(kept1001.status).toBe(200);
    const b = (s: string) => Buffer.from(s, 'base64');
    expect(verifyInclusion(1000, 1100, b(kept1001.body.leafHash), kept1001.body.proof.map(b), b(kept1001.body.rootHash))).toBe(true);
    // A removed event whose leaf tile a checkpoint keeps is still provable; one whose tile went is a 404.
    expect((await http(`${app.url}/api/v1/log/proof/inclusion?seq=301&size=1100`, { headers: bearer(org.key) })).body).toMatchObject({ eventStored: false });
    expect((await http(`${app.url}/api/v1/log/proof/inclusion?seq=5&size=1100`, { headers: bearer(org.key) })).status).toBe(404);
    for (const [from, to] of [[300, 512], [300, 1100], [512, 1100]]) {
      const r = await http(`${app.url}/api/v1/log/proof/consistency?from=${from}&to=${to}`, { headers: bearer(org.key) });
      expect(r.status).toBe(200);
      expect(verifyConsistency(from, to, b(r.body.fromRoot), b(r.body.toRoot), r.body.proof.map(b))).toBe(true);
    }
    // The log goes on: a new checkpoint extends the last one; a change after the cut is named.
    await app.ctx.eventLog.append(org.id, [logEvent('raw:id:after-cut')]);
    expect((await app.ctx.verifiableLog.checkpointer!.issue(org.id))?.size).toBe(1101);
    await app.ctx.db.query(`UPDATE audit_events SET action = 'deny' WHERE org_id = $1 AND seq = 1050`, [org.id]);
    expect(await verifyExport()).toMatchObject({ exitCode: EXIT.differs, firstBadSeq: 1050 });
  }, 60_000);
});
