// The declared Node engines are true for the whole installed tree: no package in package-lock.json needs a newer Node
// than the lowest version package.json promises (npm would warn EBADENGINE), nor than the Node running the tests.
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[]; dev?: boolean }> };

/** Every locked package whose engines.node range excludes `nodeVersion`, as "name@version wants range". */
function refusing(nodeVersion: string): string[] {
  const out: string[] = [];
  for (const [where, p] of Object.entries(lock.packages)) {
    if (!where || Array.isArray(p.engines) || !p.engines?.node) continue;
    if (!semver.satisfies(nodeVersion, p.engines.node, { includePrerelease: true })) {
      out.push(`${where.replace(/^.*node_modules\//, '')}@${p.version} wants node ${p.engines.node}`);
    }
  }
  return out;
}

describe('engines', () => {
  it('every locked package runs on the lowest Node that package.json declares', () => {
    const lowest = semver.minVersion(pkg.engines.node);
    expect(lowest).not.toBeNull();
    expect(refusing(lowest!.version)).toEqual([]);
  });

  it('every locked package runs on the Node running the tests, which package.json allows', () => {
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
    expect(refusing(process.version)).toEqual([]);
  });
});
