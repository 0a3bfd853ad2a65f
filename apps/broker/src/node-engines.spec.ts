/**
 * The Node version the README promises is the one package.json declares, and every installed package
 * accepts it, except the few the README names (each with why it is harmless): so `npm install` on that
 * Node prints EBADENGINE for those and no other.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

const ROOT = process.cwd(); // Jest runs from the repository root

/** Declare a stricter engine than the promise; each is listed in the README with the reason. */
const KNOWN_EXCEPTIONS = [/^@stoplight\/prism-/];

interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
  dev?: boolean;
}

describe('Node version truth', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };
  const promised = /Node\.js ≥ (\d+\.\d+)/.exec(readme)?.[1];

  it('the README promises what package.json declares', () => {
    expect(promised).toBeDefined();
    expect(manifest.engines.node).toBe(`>=${promised}`);
  });

  it('every locked package accepts the promised Node, except the ones the README explains', () => {
    const oldest = semver.coerce(promised)!.version;
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path.startsWith('node_modules/'))
      .map(([path, pkg]) => ({ name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), pkg }))
      .filter(({ pkg }) => {
        const range = !Array.isArray(pkg.engines) ? pkg.engines?.node : undefined;
        return range !== undefined && !semver.satisfies(oldest, range, { includePrerelease: true });
      })
      .map(({ name, pkg }) => `${name}@${pkg.version}`);
    const unexplained = refusing.filter((id) => !KNOWN_EXCEPTIONS.some((known) => known.test(id.slice(0, id.lastIndexOf('@')))));
    expect(unexplained).toEqual([]);
    // Each exception is named in the README.
    for (const id of refusing) expect(readme).toContain(id.slice(0, id.lastIndexOf('@')).replace(/^(@stoplight\/prism)-.*/, '$1'));
  });
});
