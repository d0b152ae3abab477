// `npm start`'s build check (scripts/build-if-stale.mjs): it builds when sources changed or outputs are missing, and only then.
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const SCRIPT = path.resolve('scripts/build-if-stale.mjs');

/** A stand-in project whose `npm run build` writes the outputs npm start needs and counts its runs. */
const BUILD = [
  "const fs = require('fs');",
  "for (const d of ['dist/src', 'dist/public/assets']) fs.mkdirSync(d, { recursive: true });",
  "for (const f of ['dist/src/server.js', 'dist/public/index.html', 'dist/public/assets/app.js', 'dist/public/assets/app.css']) fs.writeFileSync(f, 'built');",
  "fs.appendFileSync('builds.log', 'x');",
].join(' ');

describe('the build check of npm start', () => {
  let root: string;
  const builds = async () => (await readFile(path.join(root, 'builds.log'), 'utf8').catch(() => '')).length;
  const check = async () => (await run(process.execPath, [SCRIPT, '--root', root])).stdout;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'build-check-'));
    await mkdir(path.join(root, 'src', 'dashboard'), { recursive: true });
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'stand-in', private: true, scripts: { build: `node -e "${BUILD}"` } }));
    await writeFile(path.join(root, 'tsconfig.json'), '{}');
    await writeFile(path.join(root, 'src', 'server.ts'), 'export {};\n');
    await writeFile(path.join(root, 'src', 'dashboard', 'main.ts'), 'export {};\n');
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('builds the first time, then skips while nothing changed', async () => {
    expect(await check()).toMatch(/missing dist\/src\/server.js.*; running npm run build/);
    expect(await builds()).toBe(1);
    expect(await check()).toMatch(/current/);
    expect(await check()).toMatch(/current/);
    expect(await builds()).toBe(1);
  });

  it('builds again when a source is edited, added or removed, or tsconfig changes; not when a file is rewritten unchanged', async () => {
    const server = path.join(root, 'src', 'server.ts');
    await writeFile(server, 'export {};\n'); // same content, newer mtime
    expect(await check()).toMatch(/current/);
    expect(await builds()).toBe(1);
    await writeFile(server, 'export const x = 1;\n');
    expect(await check()).toMatch(/sources changed/);
    expect(await builds()).toBe(2);
    await writeFile(path.join(root, 'src', 'dashboard', 'new-screen.ts'), 'export {};\n');
    await check();
    expect(await builds()).toBe(3);
    await unlink(path.join(root, 'src', 'dashboard', 'new-screen.ts'));
    await check();
    expect(await builds()).toBe(4);
    await writeFile(path.join(root, 'tsconfig.json'), '{"compilerOptions":{}}');
    await check();
    expect(await builds()).toBe(5);
    expect(await check()).toMatch(/current/);
    expect(await builds()).toBe(5);
  });

  it('builds again when an output is missing', async () => {
    await unlink(path.join(root, 'dist', 'public', 'assets', 'app.js'));
    expect(await check()).toMatch(/missing dist\/public\/assets\/app\.js/);
    expect(await builds()).toBe(6);
  });

  it('fails as the build fails, and records nothing then', async () => {
    await writeFile(path.join(root, 'package.json'), JSON.stringify({ name: 'stand-in', private: true, scripts: { build: 'node -e "process.exit(3)"' } }));
    await expect(check()).rejects.toMatchObject({ code: 3 });
    await expect(check()).rejects.toMatchObject({ code: 3 }); // still stale: tried again
  });
});
