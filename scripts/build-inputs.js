#!/usr/bin/env node
// What `npm run build` compiles from, as one SHA-256, so that `npm start` compiles only when it changed.
//
//   node scripts/build-inputs.js begin    before a build: note the inputs' hash (dist/.build-inputs.pending)
//   node scripts/build-inputs.js record   after it succeeded: that hash is what dist/ was built from
//   node scripts/build-inputs.js fresh    exit 0 when dist/ was built from the inputs as they are now, else 1
//
// The inputs: every file under apps/ and libs/ that the build reads (not specs, not libs/testing, not the
// SDK's own dist/), the TypeScript configs, package.json and package-lock.json. A hash of their contents, not
// their times: a checkout or a `touch` that changes nothing rebuilds nothing, and any edit does.
// `--root <dir>` works on another tree (the tests').
'use strict';
const { createHash } = require('node:crypto');
const { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } = require('node:fs');
const { join, relative, sep } = require('node:path');

const args = process.argv.slice(2);
const rootAt = args.indexOf('--root');
const root = rootAt >= 0 ? args[rootAt + 1] : join(__dirname, '..');
const command = args.find((arg, i) => !arg.startsWith('--') && !(rootAt >= 0 && i === rootAt + 1));

const FILES = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];
const TREES = ['apps', 'libs'];
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'testing']);
const SKIPPED_FILES = /\.(spec|e2e-spec)\.ts$|^LICENSE$|\.tgz$/;
const ENTRY = join('dist', 'apps', 'local', 'src', 'main.js');
const STAMP = join('dist', '.build-inputs');

function inputs(dir, found = []) {
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) inputs(path, found);
    } else if (entry.isFile() && !SKIPPED_FILES.test(entry.name)) {
      found.push(path);
    }
  }
  return found;
}

function hash() {
  const files = [...FILES.map((name) => join(root, name)).filter(existsSync), ...TREES.flatMap((tree) => inputs(join(root, tree)))];
  const digest = createHash('sha256');
  for (const file of files.sort()) {
    digest.update(relative(root, file).split(sep).join('/'));
    digest.update('\0');
    digest.update(readFileSync(file));
    digest.update('\0');
  }
  return digest.digest('hex');
}

function read(file) {
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
}

switch (command) {
  case 'begin':
    mkdirSync(join(root, 'dist'), { recursive: true });
    writeFileSync(join(root, `${STAMP}.pending`), `${hash()}\n`);
    break;
  case 'record':
    if (existsSync(join(root, `${STAMP}.pending`))) renameSync(join(root, `${STAMP}.pending`), join(root, STAMP));
    break;
  case 'fresh': {
    const fresh = existsSync(join(root, ENTRY)) && read(join(root, STAMP)) === hash();
    if (fresh) process.stderr.write('build: nothing changed since the last build of dist/, not compiling (npm run build forces one)\n');
    process.exitCode = fresh ? 0 : 1;
    break;
  }
  default:
    process.stderr.write('usage: node scripts/build-inputs.js begin|record|fresh [--root <dir>]\n');
    process.exitCode = 2;
}
