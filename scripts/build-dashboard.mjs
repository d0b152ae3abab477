// Builds the browser dashboard (src/dashboard) into dist/public: index.html, assets/app.js (bundled, minified) and assets/app.css.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const srcDir = path.join(root, 'src', 'dashboard');
const outDir = path.join(root, 'dist', 'public');
const BUDGET_BYTES = 150 * 1024;

async function main() {
  const started = Date.now();
  const common = { bundle: true, minify: true, write: false, logLevel: 'silent', legalComments: 'none', target: ['es2020', 'chrome90', 'firefox90', 'safari15'] };
  const [js, css, html] = await Promise.all([
    build({ ...common, entryPoints: [path.join(srcDir, 'main.ts')], outfile: path.join(outDir, 'assets', 'app.js'), format: 'iife', platform: 'browser' }),
    build({ ...common, entryPoints: [path.join(srcDir, 'app.css')], outfile: path.join(outDir, 'assets', 'app.css') }),
    readFile(path.join(srcDir, 'index.html'), 'utf8'),
  ]);
  for (const asset of ['/assets/app.js', '/assets/app.css']) {
    if (!html.includes(`"${asset}"`)) throw new Error(`src/dashboard/index.html does not reference ${asset}`);
  }
  const files = [
    { path: path.join(outDir, 'index.html'), contents: Buffer.from(html) },
    ...js.outputFiles,
    ...css.outputFiles,
  ];
  const total = files.reduce((sum, f) => sum + f.contents.byteLength, 0);
  if (total > BUDGET_BYTES) throw new Error(`dashboard assets are ${kb(total)}, over the ${kb(BUDGET_BYTES)} budget`);
  await mkdir(path.join(outDir, 'assets'), { recursive: true });
  await Promise.all(files.map((f) => writeFile(f.path, f.contents)));
  const list = files.map((f) => `${path.relative(outDir, f.path)} ${kb(f.contents.byteLength)}`).join(', ');
  console.log(`dashboard: wrote ${path.relative(root, outDir)}/ ${list} (${kb(total)} total) in ${Date.now() - started} ms`);
}

function kb(bytes) {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

main().catch((err) => {
  const messages = err?.errors?.length ? err.errors.map((e) => `${e.location ? `${e.location.file}:${e.location.line}: ` : ''}${e.text}`) : [err?.message ?? String(err)];
  console.error(`dashboard build failed:\n  ${messages.join('\n  ')}`);
  process.exit(1);
});
