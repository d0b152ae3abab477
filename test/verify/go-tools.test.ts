// An independent implementation checks the log: Go's golang.org/x/mod/sumdb/note opens our checkpoints with our
// verifier key, and sumdb/tlog checks our inclusion and consistency proofs and reads our C2SP tiles over HTTP
// (test/verify/go/checklog.go). Needs Go and x/mod: Debian's golang-1.19-go and golang-golang-x-mod-dev (GO_BIN
// names another go binary; GOPATH defaults to /usr/share/gocode, where Debian installs x/mod).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { bearer, createOrg, http } from '../helpers/app.js';
import { backendNames } from '../helpers/backends.js';
import { suiteApp } from '../helpers/suite-app.js';
import { logEvent, signingKeyFile, upTo } from './log-helpers.js';

const GO = process.env.GO_BIN ?? (existsSync('/usr/lib/go-1.19/bin/go') ? '/usr/lib/go-1.19/bin/go' : 'go');
const GOPATH = process.env.GOPATH ?? '/usr/share/gocode';

function runGo(inputFile: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      GO,
      ['run', path.join('test', 'verify', 'go', 'checklog.go'), inputFile],
      { encoding: 'utf8', env: { ...process.env, GO111MODULE: 'off', GOPATH, GOFLAGS: '', GOCACHE: process.env.GOCACHE ?? path.join(tmpdir(), 'audit-stream-gocache') } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe.each(backendNames)('Go sumdb/note and sumdb/tlog check the log (%s)', (backendName) => {
  const { app } = suiteApp(backendName, { SIGNING_KEY_FILE: signingKeyFile('audit.example.test'), PUBLIC_HOST: 'audit.example.test', ANOMALY_MIN_RATE: '1000000000', CHECKPOINT_INTERVAL_MS: '3600000', CHECKPOINT_EVERY_EVENTS: '100000000' });

  it('opens every checkpoint, checks inclusion and consistency proofs, and proves leaves from the C2SP tiles', async () => {
    const org = await createOrg(app.url);
    const checkpoints: string[] = [];
    for (const n of [100, 156, 1, 443]) {
      await app.ctx.eventLog.append(org.id, upTo(n).map((i) => logEvent(`raw:id:go-${checkpoints.length}-${i}`, { metadata: { i, unicode: 'é\u2028😀', big: 1e21, neg: -0.5 } })));
      checkpoints.push((await app.ctx.verifiableLog.checkpointer!.issue(org.id))!.note);
    }
    const sizes = [100, 256, 257, 700];
    const exported = await (await fetch(`${app.url}/api/v1/audit-events/export`, { headers: bearer(org.key) })).text();
    const data = exported.split('\n').filter(Boolean).map((l) => Buffer.from(canonicalize(JSON.parse(l))!, 'utf8').toString('base64'));
    expect(data).toHaveLength(700);
    const inclusion = [];
    for (const size of sizes) {
      for (const seq of [1, 2, Math.ceil(size / 2), size]) {
        const r = await http(`${app.url}/api/v1/log/proof/inclusion?seq=${seq}&size=${size}`, { headers: bearer(org.key) });
        expect(r.status).toBe(200);
        inclusion.push({ index: seq - 1, size, data: data[seq - 1], proof: r.body.proof });
      }
    }
    const consistency = [];
    for (const from of sizes) {
      for (const to of sizes.filter((s) => s >= from)) {
        const r = await http(`${app.url}/api/v1/log/proof/consistency?from=${from}&to=${to}`, { headers: bearer(org.key) });
        expect(r.status).toBe(200);
        consistency.push({ from, to, proof: r.body.proof });
      }
    }
    const keys = await http(`${app.url}/api/v1/log/keys`, { headers: bearer(org.key) });
    expect(keys.body.current).toMatch(/^audit\.example\.test\+[0-9a-f]{8}\+/);
    const input = {
      verifierKey: keys.body.current,
      checkpoints,
      inclusion,
      consistency,
      tileBase: `${app.url}/api/v1/log`,
      apiKey: org.key,
      tileLeaves: [0, 255, 256, 511, 512, 699].map((i) => ({ index: i, data: data[i] })),
    };
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'audit-stream-go-')), 'input.json');
    writeFileSync(file, JSON.stringify(input));
    const out = await runGo(file);
    expect(out.stderr + out.stdout).toMatch(new RegExp(`^ok origin=audit\\.example\\.test/orgs/${org.id} checkpoints=4 inclusion=16 consistency=10 tileLeaves=6 tiles=\\d+`));
    expect(out.code).toBe(0);

    // A proof Go must refuse: the first inclusion proof with one hash changed.
    const bad = { ...input, inclusion: [{ ...inclusion[3], proof: [Buffer.alloc(32, 1).toString('base64'), ...inclusion[3].proof.slice(1)] }], tileBase: '' };
    writeFileSync(file, JSON.stringify(bad));
    const refused = await runGo(file);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/FAIL: CheckRecord/);
  }, 120_000);

  it('parses the signed-note reference verifier key with Go\'s note.NewVerifier (the same vector our parser, signer and opener pass in tree.test.ts)', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'audit-stream-go-')), 'input.json');
    writeFileSync(file, JSON.stringify({ verifierKey: 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW', checkpoints: [] }));
    const out = await runGo(file);
    expect(out.code, out.stderr).toBe(0);
  }, 60_000);
});
