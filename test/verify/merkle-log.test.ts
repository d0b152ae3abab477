// The verifiable log is built in the append transaction: its tiles hold the leaf hashes of the stored events and the
// subtree hashes above them, whoever appends (one request, many at once, two instances, the log switched on late),
// and the checkpoints signed along the way are consistent with each other.
import { describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import { bearer, createOrg, http, startApp } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';
import { memoryNodes, rootAt, verifyConsistency, consistencyProof } from '../../src/verify/tree.js';
import { withStoredNodes } from '../../src/verify/stored-nodes.js';
import { openNote, parseVerifierKey } from '../../src/verify/signed-note.js';
import { parseCheckpointText } from '../../src/verify/checkpoint.js';
import { logEvent, logSizeOf, signingKeyFile, storedLeaves, storedRoot, upTo } from './log-helpers.js';

const quiet = { SIGNING_KEY_FILE: signingKeyFile(), ANOMALY_MIN_RATE: '1000000000', CHECKPOINT_INTERVAL_MS: '3600000', CHECKPOINT_EVERY_EVENTS: '100000000' };

describe.each(backendNames)('the Merkle log in the append transaction (%s)', (backendName) => {
  const { app, backend } = suiteApp(backendName, quiet);

  async function expectTreeOfStoredEvents(orgId: string, n: number) {
    const leaves = await storedLeaves(app.ctx.db, orgId);
    expect(leaves.map((l) => l.seq)).toEqual(upTo(n));
    expect(await logSizeOf(app.ctx.db, orgId)).toBe(n);
    const mem = memoryNodes(leaves.map((l) => l.leaf));
    for (const size of [1, 255, 256, 257, 511, 512, n]) {
      if (size <= n) expect((await storedRoot(app.ctx.db, orgId, size)).toString('hex')).toBe(rootAt(size, mem).toString('hex'));
    }
    const widths = await app.ctx.db.query<{ level: number; idx: string; w: number }>('SELECT level, idx, octet_length(hashes) / 32 AS w FROM merkle_tile_hashes WHERE org_id = $1 ORDER BY level, idx', [orgId]);
    const expected = [];
    for (let level = 0, count = n; count > 0; level++, count = Math.floor(count / 256)) {
      for (let t = 0; t * 256 < count; t++) expected.push({ level, idx: t, w: Math.min(256, count - t * 256) });
    }
    expect(widths.rows.map((r) => ({ level: Number(r.level), idx: Number(r.idx), w: Number(r.w) }))).toEqual(expected);
  }

  it('adds each append\'s leaves in its transaction, across tile boundaries, as tiles of the stored events\' hashes', async () => {
    const org = await createOrg(app.url);
    let seq = 0;
    // Values JSON cannot carry, absent ones, and characters RFC 8785 escapes or keeps: the leaf hashed in two parts
    // (before and under the seq lock) equals the hash of the stored event's canonical bytes.
    const odd = { nan: NaN, inf: -Infinity, absent: undefined, text: 'é\u2028\u0007"\\😀', big: 1e21, small: 5e-7, neg: -0, list: [null, true, { z: 1, a: 2 }] };
    for (const n of [1, 254, 1, 1, 300, 500, 3]) {
      await app.ctx.eventLog.append(org.id, upTo(n).map((i) => logEvent(`raw:id:a-${seq + i}`, i % 7 === 0 ? { metadata: { ...odd, i }, latencyMs: null, sessionId: `s-${i % 3}` } : {})));
      seq += n;
    }
    // A state change appended through appendChecked is a leaf too.
    await app.ctx.eventLog.appendChecked(org.id, async () => ({ events: [logEvent('raw:id:checked', { type: 'log', toolName: null })], result: null }));
    // The three sessions named got a session_update each (events the append made itself, hashed whole).
    await expectTreeOfStoredEvents(org.id, seq + 1 + 3);
  });

  it('keeps one tree when appends of one organization run at once, and its checkpoints are consistent pairwise', async () => {
    const org = await createOrg(app.url);
    const cp = app.ctx.verifiableLog.checkpointer!;
    const issued: number[] = [];
    const writes = upTo(12).map(async (r) => {
      await app.ctx.eventLog.append(org.id, upTo(40).map((i) => logEvent(`raw:id:c-${r}-${i}`)));
      const c = await cp.issue(org.id);
      if (c) issued.push(c.size);
    });
    await Promise.all(writes);
    await expectTreeOfStoredEvents(org.id, 480);
    expect(issued.length).toBeGreaterThan(0);
    await expectConsistentCheckpoints(org.id);
  });

  it.runIf(backendName === 'real')('keeps one tree when two instances append for one organization at once', async () => {
    const other = await startApp({ ...(await backend.sibling()), ...quiet });
    try {
      const org = await createOrg(app.url);
      const writes = upTo(8).flatMap((r) =>
        [app, other].map(async (a, k) => {
          await a.ctx.eventLog.append(org.id, upTo(70).map((i) => logEvent(`raw:id:two-${k}-${r}-${i}`)));
          await a.ctx.verifiableLog.checkpointer!.issue(org.id);
        }),
      );
      await Promise.all(writes);
      await expectTreeOfStoredEvents(org.id, 1120);
      await expectConsistentCheckpoints(org.id);
    } finally {
      await other.close();
    }
  });

  it('hashes each leaf from what its row stores: CloudWatch events whose metadata shares its batch context, and own __proto__ keys', async () => {
    const org = await createOrg(app.url);
    const logEvents = upTo(300).map((i) => ({
      id: String(10n ** 55n + BigInt(i)),
      timestamp: 1714558800000 + i,
      message: i % 3 === 0 ? `2026-05-01T10:00:00.000Z\tabc-${i}\tINFO\t{"tool":"search","server":"mcp-a","session":"s-${i % 7}","latency_ms":${i}}` : `level=info msg="tool call" tool=read_${i % 5} server=mcp-b session=s-${i % 4}`,
      ...(i % 10 === 0 ? { extractedFields: { requestId: `r-${i}`, nested: { a: i } } } : {}),
    }));
    const payload = { messageType: 'DATA_MESSAGE', owner: '123456789012', logGroup: '/aws/lambda/tools', logStream: '2026/05/01/[$LATEST]x', subscriptionFilters: ['audit'], logEvents };
    // An own __proto__ key inside the gzip payload (the JSON body parser refuses one at the top).
    const text = JSON.stringify(payload).replace('"extractedFields":{', '"extractedFields":{"__proto__":{"p":1},');
    const res = await http(`${app.url}/api/v1/ingest/cloudwatch`, { method: 'POST', headers: bearer(org.key), json: { awslogs: { data: gzipSync(text).toString('base64') } } });
    expect(res.body).toEqual({ accepted: 300, duplicates: 0 });
    const contexts = await app.ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_events WHERE org_id = $1 AND context_id IS NOT NULL', [org.id]);
    expect(contexts.rows[0].n).toBeGreaterThan(0);
    // The calls and the session_updates of the sessions they opened.
    const stored = (await storedLeaves(app.ctx.db, org.id)).length;
    expect(stored).toBeGreaterThan(300);
    await expectTreeOfStoredEvents(org.id, stored);
  });

  /**
   * A sibling's data (a directory of its own when embedded) opened without the log: an organization with `n` events
   * and an empty log. Returns the environment to open it again and the organization.
   */
  async function appendedWithoutLog(n: number, prefix: string) {
    const env = await backend.sibling();
    const off = await startApp({ ...env, ...quiet, MERKLE_LOG: 'false' });
    try {
      const org = await createOrg(off.url);
      await off.ctx.eventLog.append(org.id, upTo(n).map((i) => logEvent(`raw:id:${prefix}-${i}`)));
      expect(await logSizeOf(off.ctx.db, org.id)).toBe(0);
      return { env, org };
    } finally {
      await off.close();
    }
  }

  it('catches up a log switched on after events were appended without it, a bounded page per append', async () => {
    const { env, org } = await appendedWithoutLog(30, 'off');
    const on = await startApp({ ...env, ...quiet, MERKLE_CATCHUP_EVENTS: '20' });
    try {
      await on.ctx.eventLog.append(org.id, [logEvent('raw:id:on-1')]);
      // 21 caught up (20 more than the append adds); the new leaf waits.
      expect(await logSizeOf(on.ctx.db, org.id)).toBe(21);
      await on.ctx.eventLog.append(org.id, [logEvent('raw:id:on-2')]);
      const leaves = await storedLeaves(on.ctx.db, org.id);
      expect(await logSizeOf(on.ctx.db, org.id)).toBe(32);
      expect((await storedRoot(on.ctx.db, org.id, 32)).equals(rootAt(32, memoryNodes(leaves.map((l) => l.leaf))))).toBe(true);
    } finally {
      await on.close();
    }
  });

  it('catches up a log whose first append after it fell behind completes a tile it does not hold (the append is stored)', async () => {
    const { env, org } = await appendedWithoutLog(300, 'behind');
    const on = await startApp({ ...env, ...quiet, MERKLE_CATCHUP_EVENTS: '100' });
    try {
      // Seq 301..550 would complete leaf tile 1 (seqs 257..512), of which the log holds nothing yet. Each append catches
      // up to 100 more stored events than it adds (350 here: all 300), then its own join.
      const first = await on.ctx.eventLog.append(org.id, upTo(250).map((i) => logEvent(`raw:id:after-${i}`)));
      expect(first.accepted).toBe(250);
      expect(await logSizeOf(on.ctx.db, org.id)).toBe(550);
      for (let round = 0; round < 3; round++) await on.ctx.eventLog.append(org.id, upTo(250).map((i) => logEvent(`raw:id:more-${round}-${i}`)));
      const leaves = await storedLeaves(on.ctx.db, org.id);
      expect(leaves).toHaveLength(1300);
      expect(await logSizeOf(on.ctx.db, org.id)).toBe(1300);
      const mem = memoryNodes(leaves.map((l) => l.leaf));
      for (const size of [256, 300, 512, 1024, 1300]) expect((await storedRoot(on.ctx.db, org.id, size)).equals(rootAt(size, mem))).toBe(true);
    } finally {
      await on.close();
    }
  });

  async function expectConsistentCheckpoints(orgId: string) {
    const keys = (await app.ctx.db.query<{ verifier_key: string }>('SELECT verifier_key FROM merkle_verifier_keys')).rows.map((r) => parseVerifierKey(r.verifier_key));
    const rows = (await app.ctx.db.query<{ note: string }>('SELECT note FROM merkle_checkpoints WHERE org_id = $1 ORDER BY size', [orgId])).rows;
    const cps = rows.map((r) => parseCheckpointText(openNote(r.note, keys).text));
    expect(cps.length).toBeGreaterThan(0);
    for (const c of cps) expect(c.origin).toBe(`localhost/orgs/${orgId}`);
    const size = await logSizeOf(app.ctx.db, orgId);
    for (const a of cps) {
      for (const b of cps) {
        if (a.size > b.size) continue;
        const proof = await withStoredNodes(app.ctx.db, orgId, (nodes) => consistencyProof(a.size, b.size, nodes));
        expect(verifyConsistency(a.size, b.size, a.root, b.root, proof)).toBe(true);
      }
    }
    expect(cps[cps.length - 1].size).toBeLessThanOrEqual(size);
  }
});
