// Prints the hottest functions of a V8 .cpuprofile (self and total time), e.g. `npx tsx bench/profile-summary.ts bench/.tmp/prof/ingest.cpuprofile`.
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}

interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
const top = Number(process.argv[3] ?? 25);
if (!file) {
  console.log('usage: tsx bench/profile-summary.ts <file.cpuprofile> [rows]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Time per sample from timeDeltas; attribute each sample to its node (self) and every distinct ancestor frame (total).
const selfMs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  const dt = (profile.timeDeltas[i] ?? 0) / 1000;
  selfMs.set(profile.samples[i], (selfMs.get(profile.samples[i]) ?? 0) + dt);
}
const label = (n: Node) => {
  const url = n.callFrame.url.replace(/^.*\/(node_modules\/|src\/|dist\/)/, '$1');
  return `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
};
const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
for (const [id, ms] of selfMs) {
  all += ms;
  const n = byId.get(id)!;
  self.set(label(n), (self.get(label(n)) ?? 0) + ms);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (seen.has(l)) continue;
    seen.add(l);
    total.set(l, (total.get(l) ?? 0) + ms);
  }
}
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (of ${(all / 1000).toFixed(1)} s sampled)`);
  for (const [l, ms] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${((100 * ms) / all).toFixed(1).padStart(6)}%  ${l}`);
};
print('self time', self);
print('total time', total);
