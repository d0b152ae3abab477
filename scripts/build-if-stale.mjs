// `npm start` runs this first: it builds (npm run build) only when the build's inputs changed since the last build, or its outputs are missing.
// Usage: node scripts/build-if-stale.mjs [--root DIR] [--stamp]   (--stamp: only record the current inputs as built; `npm run build` ends with it)
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const argAt = process.argv.indexOf('--root');
const root = path.resolve(argAt > 0 ? process.argv[argAt + 1] : fileURLToPath(new URL('..', import.meta.url)));

/** What the build reads: every file under these folders, and these files. */
const INPUT_DIRS = ['src'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build-dashboard.mjs'];
/** What the build writes that `npm start` needs. */
const OUTPUTS = ['dist/src/server.js', 'dist/public/index.html', 'dist/public/assets/app.js', 'dist/public/assets/app.css'];
const STAMP = 'dist/.build-inputs';

async function filesUnder(dir) {
  const out = [];
  let entries = [];
  try {
    entries = await readdir(path.join(root, dir), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(rel)));
    else if (e.isFile()) out.push(rel);
  }
  return out;
}

/** A digest of the inputs' names and contents: any edit, addition, removal or rename changes it (mtimes play no part). */
async function inputsDigest() {
  const files = [...(await Promise.all(INPUT_DIRS.map(filesUnder))).flat(), ...INPUT_FILES.filter((f) => existsSync(path.join(root, f)))].sort();
  const hash = createHash('sha256');
  for (const f of files) {
    hash.update(`${f}\0`);
    hash.update(await readFile(path.join(root, f)));
    hash.update('\0');
  }
  return `${hash.digest('hex')} ${files.length} files`;
}

async function stamp(digest) {
  await mkdir(path.join(root, 'dist'), { recursive: true });
  await writeFile(path.join(root, STAMP), `${digest}\n`);
}

async function main() {
  const digest = await inputsDigest();
  if (process.argv.includes('--stamp')) return stamp(digest);
  const built = await readFile(path.join(root, STAMP), 'utf8').then((s) => s.trim(), () => null);
  const missing = OUTPUTS.filter((f) => !existsSync(path.join(root, f)));
  if (built === digest && missing.length === 0) {
    console.log('build: current (sources unchanged since the last build), not rebuilding');
    return;
  }
  console.log(`build: ${missing.length ? `missing ${missing.join(', ')}` : built === null ? 'never built here' : 'sources changed'}; running npm run build`);
  const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  // The digest of before the build: a file edited while it ran is built again next time.
  await stamp(digest);
}

main().catch((err) => {
  console.error(`build check failed: ${err?.message ?? String(err)}`);
  process.exit(1);
});
