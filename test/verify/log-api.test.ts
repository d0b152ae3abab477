// The log's API as a client meets it: credentials and scope, no checkpoint yet, a checkpoint issued by itself after
// CHECKPOINT_EVERY_EVENTS events, checkpoints by size, keys, tiles full and partial, refusals of bad input, and the
// verifier's usage errors.
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bearer, createOrg, http, startApp } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';
import type { StoredCheckpoint } from '../../src/verify/merkle-sql.js';
import { logEvent, signingKeyFile, upTo } from './log-helpers.js';

describe.each(backendNames)('the log API (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { SIGNING_KEY_FILE: signingKeyFile(), ANOMALY_MIN_RATE: '1000000000', CHECKPOINT_INTERVAL_MS: '3600000', CHECKPOINT_EVERY_EVENTS: '300' });

  it('needs a key with events:read, and has no checkpoint before the first is issued', async () => {
    const org = await createOrg(app.url);
    expect((await http(`${app.url}/api/v1/log/checkpoint`)).status).toBe(401);
    const writer = await createOrg(app.url, { scopes: ['ingest:write'] });
    expect((await http(`${app.url}/api/v1/log/keys`, { headers: bearer(writer.key) })).status).toBe(403);
    const none = await http(`${app.url}/api/v1/log/checkpoints/latest`, { headers: bearer(org.key) });
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ statusCode: 404, code: 'not_found' });
  });

  it('issues a checkpoint by itself once CHECKPOINT_EVERY_EVENTS events are past the latest, and serves it by size and as tiles', async () => {
    const org = await createOrg(app.url);
    const issued = new Promise<StoredCheckpoint>((resolve) => app.ctx.verifiableLog.onIssued((orgId, c) => orgId === org.id && resolve(c)));
    await app.ctx.eventLog.append(org.id, upTo(299).map((i) => logEvent(`raw:id:api-${i}`)));
    expect((await http(`${app.url}/api/v1/log/checkpoints/latest`, { headers: bearer(org.key) })).status).toBe(404);
    await app.ctx.eventLog.append(org.id, [logEvent('raw:id:api-300')]);
    const c = await issued;
    expect(c.size).toBe(300);
    const latest = await http(`${app.url}/api/v1/log/checkpoints/latest`, { headers: bearer(org.key) });
    expect(latest.body).toMatchObject({ origin: `localhost/orgs/${org.id}`, size: 300, rootHash: c.root.toString('base64'), note: c.note });
    expect((await http(`${app.url}/api/v1/log/checkpoints?size=17`, { headers: bearer(org.key) })).body.size).toBe(300);
    expect((await http(`${app.url}/api/v1/log/checkpoints?size=301`, { headers: bearer(org.key) })).status).toBe(404);
    const text = await fetch(`${app.url}/api/v1/log/checkpoint`, { headers: bearer(org.key) });
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await text.text()).toBe(c.note);
    const keys = await http(`${app.url}/api/v1/log/keys`, { headers: bearer(org.key) });
    expect(keys.body.keys.map((k: { verifierKey: string }) => k.verifierKey)).toContain(keys.body.current);

    const tile = async (p: string) => fetch(`${app.url}/api/v1/log/${p}`, { headers: bearer(org.key) });
    const full = await tile('tile/0/000');
    expect([full.status, full.headers.get('content-type'), (await full.arrayBuffer()).byteLength]).toEqual([200, 'application/octet-stream', 8192]);
    expect(full.headers.get('cache-control')).toMatch(/immutable/);
    const partial = await tile('tile/0/001.p/44');
    expect([partial.status, (await partial.arrayBuffer()).byteLength]).toEqual([200, 44 * 32]);
    const level1 = await tile('tile/1/000.p/1');
    expect(Buffer.from(await level1.arrayBuffer())).toHaveLength(32);
    for (const bad of ['tile/0/001.p/45', 'tile/0/001', 'tile/0/1', 'tile/0/000.p/256', 'tile/entries/000', 'tile/0/x000/000']) {
      const r = await tile(bad);
      expect(r.status, bad).toBe(404);
      expect(((await r.json()) as { code: string }).code).toBe('not_found');
    }
  });

  it('refuses proofs past the log or outside the tree with 400', async () => {
    const org = await createOrg(app.url);
    await app.ctx.eventLog.append(org.id, upTo(5).map((i) => logEvent(`raw:id:bad-${i}`)));
    const past = await http(`${app.url}/api/v1/log/proof/inclusion?seq=1&size=6`, { headers: bearer(org.key) });
    expect(past.body).toMatchObject({ statusCode: 400, code: 'size_past_log' });
    expect((await http(`${app.url}/api/v1/log/proof/inclusion?seq=5&size=4`, { headers: bearer(org.key) })).status).toBe(400);
    expect((await http(`${app.url}/api/v1/log/proof/consistency?from=5&to=4`, { headers: bearer(org.key) })).status).toBe(400);
    expect((await http(`${app.url}/api/v1/log/proof/consistency?from=0&to=4`, { headers: bearer(org.key) })).status).toBe(400);
    expect((await http(`${app.url}/api/v1/log/proof/inclusion?seq=1&size=5&extra=1`, { headers: bearer(org.key) })).status).toBe(400);
    expect((await http(`${app.url}/api/v1/log/proof/inclusion?seq=x`, { headers: bearer(org.key) })).status).toBe(400);
  });

  it.runIf(backendName === 'embedded')('the verifier exits 2 on bad usage and on an export line that is not JSON', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number; stderr: string }>((resolve) =>
        execFile(process.execPath, ['--import', 'tsx', 'src/cli/audit-stream.ts', ...args], (err, _out, stderr) => resolve({ code: err ? Number((err as { code?: number }).code) : 0, stderr })),
      );
    expect((await run(['verify', '--export', '-'])).code).toBe(2);
    expect((await run(['frobnicate'])).code).toBe(2);
    const r = await run(['verify', '--export', 'package.json', '--checkpoint', 'package.json', '--key', 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/line 1 of the export is not JSON|no seq/);
  }, 60_000);
});

describe.each(backendNames)('signing key rotation (%s)', (backendName) => {
  const { backend } = suiteApp(backendName, { ANOMALY_MIN_RATE: '1000000000' });

  it('keeps the old verifier key published and extends the log under the new key', async () => {
    const env = { ...(await backend.sibling()), ANOMALY_MIN_RATE: '1000000000', CHECKPOINT_INTERVAL_MS: '3600000', CHECKPOINT_EVERY_EVENTS: '100000000' };
    const first = await startApp({ ...env, SIGNING_KEY_FILE: signingKeyFile() });
    let org;
    let old: StoredCheckpoint;
    let oldKey: string;
    try {
      org = await createOrg(first.url);
      await first.ctx.eventLog.append(org.id, upTo(10).map((i) => logEvent(`raw:id:rot-${i}`)));
      old = (await first.ctx.verifiableLog.checkpointer!.issue(org.id))!;
      oldKey = first.ctx.verifiableLog.verifierKey!;
    } finally {
      await first.close();
    }
    const second = await startApp({ ...env, SIGNING_KEY_FILE: signingKeyFile() });
    try {
      const newKey = second.ctx.verifiableLog.verifierKey!;
      expect(newKey).not.toBe(oldKey);
      await second.ctx.eventLog.append(org.id, upTo(5).map((i) => logEvent(`raw:id:rot-new-${i}`)));
      // The latest checkpoint (signed by the old key) verifies with the published keys, so the new one is issued.
      const next = await second.ctx.verifiableLog.checkpointer!.issue(org.id);
      expect(next?.size).toBe(15);
      const keys = await http(`${second.url}/api/v1/log/keys`, { headers: bearer(org.key) });
      expect(keys.body.current).toBe(newKey);
      expect(keys.body.keys.map((k: { verifierKey: string }) => k.verifierKey)).toEqual(expect.arrayContaining([oldKey, newKey]));
      const proof = await http(`${second.url}/api/v1/log/proof/consistency?from=10&to=15`, { headers: bearer(org.key) });
      expect(proof.body).toMatchObject({ fromCheckpoint: old.note, toCheckpoint: next!.note });
    } finally {
      await second.close();
    }
  }, 60_000);
});
