#!/usr/bin/env node
// `npm run broker -- <command>`: runs the compiled CLI, compiling it first (apps/cli and libs/sdk
// only, so it does not wait on the rest of the monorepo) when dist/ is missing or older than a source.
'use strict';
const { spawnSync } = require('node:child_process');
const { existsSync, readdirSync, statSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..', '..');
const entry = join(root, 'dist', 'apps', 'cli', 'src', 'main.js');
// Written after a build of the CLI succeeds: tsc only rewrites the outputs whose sources changed.
const stamp = join(root, 'dist', 'apps', 'cli', '.built');
const sources = [join(root, 'apps', 'cli', 'src'), join(root, 'libs', 'sdk', 'src')];

function newestSource(dir) {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

function build() {
  const project = join(root, 'apps', 'cli', 'tsconfig.app.json');
  for (const [bin, args] of [
    [require.resolve('typescript/bin/tsc'), ['-p', project]],
    [require.resolve('tsc-alias/dist/bin/index.js'), ['-p', project]],
  ]) {
    const result = spawnSync(process.execPath, [bin, ...args], { cwd: root, stdio: ['ignore', 2, 2] });
    if (result.status !== 0) {
      process.stderr.write('broker: building the CLI failed (see above)\n');
      process.exit(2);
    }
  }
  writeFileSync(stamp, new Date().toISOString());
}

const stale = !existsSync(entry) || !existsSync(stamp) || sources.some((dir) => newestSource(dir) > statSync(stamp).mtimeMs);
if (stale && existsSync(sources[0])) build();
require(entry);
