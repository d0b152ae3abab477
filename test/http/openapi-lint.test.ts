// /openapi.json passes `redocly lint` (recommended rules) with no error, names the package version and a server, and every operation has an operationId and its 4xx answers.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { http } from '../helpers/app.js';
import { suiteApp } from '../helpers/suite-app.js';

const run = promisify(execFile);
const REDOCLY = path.resolve('node_modules/@redocly/cli/bin/cli.js');

describe('openapi.json, linted', () => {
  const { app } = suiteApp('embedded');
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let doc: any;

  beforeAll(async () => {
    const r = await http(`${app.url}/openapi.json`);
    expect(r.status).toBe(200);
    doc = r.body;
  });

  it('is clean of errors and warnings under redocly lint', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'openapi-lint-'));
    try {
      const file = path.join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(doc));
      // Exit status 1 on errors; the JSON report is on stdout either way.
      const out = await run(process.execPath, [REDOCLY, 'lint', file, '--format=json'], { maxBuffer: 16 * 1024 * 1024 }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      const report = JSON.parse(out.stdout) as { totals: { errors: number; warnings: number }; problems: { message: string; location: { pointer: string }[] }[] };
      expect(report.problems.map((p) => `${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('carries the package version and a server', async () => {
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
    expect(doc.info.version).toBe(pkg.version);
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })]);
  });

  it('gives every operation a unique operationId and declares its client errors', () => {
    const ids: string[] = [];
    for (const [p, methods] of Object.entries<Record<string, { operationId?: string; responses: Record<string, unknown>; security?: unknown[] }>>(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        expect(op.operationId, `${method} ${p}`).toMatch(/^[a-z]+[A-Za-z0-9]*$/);
        ids.push(op.operationId as string);
        expect(op.responses['400'], `${method} ${p}`).toBeDefined();
        if (op.security?.length) for (const code of ['401', '403']) expect(op.responses[code], `${method} ${p} ${code}`).toBeDefined();
        if (p.includes('{')) expect(op.responses['404'], `${method} ${p}`).toBeDefined();
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(doc.paths['/api/v1/sessions/{id}/suspend'].post.operationId).toBe('postSessionsByIdSuspend');
    expect(doc.paths['/api/v1/audit-events'].get.operationId).toBe('getAuditEvents');
    // Ingest routes of a protocol with its own error shape declare their 4xx in that shape.
    const firehose = doc.paths['/api/v1/ingest/firehose'].post.responses;
    expect(firehose['400']).toEqual(firehose.default);
  });
});
