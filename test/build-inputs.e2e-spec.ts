/**
 * `npm start` compiles only when what the build reads has changed (scripts/build-inputs.js): on a tree of
 * the test's own, the build's hash says fresh until a source, a config or the lockfile changes, and stays
 * fresh through a rewrite that changes nothing or a new spec file (which the build does not read).
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const SCRIPT = join(process.cwd(), 'scripts/build-inputs.js');

describe('scripts/build-inputs.js', () => {
  let root: string;

  const step = (command: 'begin' | 'record' | 'fresh') =>
    spawnSync(process.execPath, [SCRIPT, command, '--root', root], { encoding: 'utf8' }).status;
  const built = () => step('begin') === 0 && step('record') === 0;
  const write = async (path: string, text: string) => {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  };

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'build-inputs-'));
    await write('package.json', '{"name":"x"}');
    await write('package-lock.json', '{"lockfileVersion":3}');
    await write('tsconfig.json', '{}');
    await write('apps/broker/src/main.ts', 'export const a = 1;\n');
    await write('libs/sdk/src/index.ts', 'export const b = 2;\n');
    await write('apps/broker/src/ops/assets/ops.js', '"use strict";\n');
    await write('dist/apps/local/src/main.js', '');
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('is not fresh before a build has been recorded, and is after one', () => {
    expect(step('fresh')).toBe(1);
    expect(built()).toBe(true);
    expect(step('fresh')).toBe(0);
  });

  it('stays fresh through a rewrite with the same content and a new spec file', async () => {
    expect(built()).toBe(true);
    await write('apps/broker/src/main.ts', 'export const a = 1;\n');
    await write('apps/broker/src/main.spec.ts', 'it("x", () => undefined);\n');
    await write('libs/testing/src/helper.ts', 'export {};\n');
    expect(step('fresh')).toBe(0);
  });

  it.each([
    ['a source is edited', 'apps/broker/src/main.ts', 'export const a = 2;\n'],
    ['a source is added', 'libs/sdk/src/extra.ts', 'export {};\n'],
    ['an asset the build copies is edited', 'apps/broker/src/ops/assets/ops.js', '"use strict"; // changed\n'],
    ['the lockfile changes', 'package-lock.json', '{"lockfileVersion":3,"packages":{}}'],
    ['a TypeScript config changes', 'tsconfig.json', '{"compilerOptions":{}}'],
  ])('is stale after %s, and fresh again after the next build', async (_what, path, text) => {
    expect(built()).toBe(true);
    await write(path, text);
    expect(step('fresh')).toBe(1);
    expect(built()).toBe(true);
    expect(step('fresh')).toBe(0);
  });

  it('is stale when the built entry point is gone', async () => {
    expect(built()).toBe(true);
    await rm(join(root, 'dist/apps/local/src/main.js'));
    expect(step('fresh')).toBe(1);
  });

  it('records nothing for a build that failed after it began', async () => {
    expect(built()).toBe(true);
    await write('apps/broker/src/main.ts', 'export const a = 3;\n');
    expect(step('begin')).toBe(0); // ...and the compiler fails: `record` never runs
    expect(step('fresh')).toBe(1);
  });
});
