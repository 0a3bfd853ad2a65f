#!/usr/bin/env node
// `npm run lint:cycles`: the import cycles between the feature folders of apps/broker/src (sessions/,
// relay/, accounts/, ...; each folder of common/ counts as one of its own), read by madge from the
// TypeScript sources (specs left out: they may import what they test from anywhere). A folder graph
// with a cycle has two features that cannot be changed, or read, one without the other.
//
// The files at the root of apps/broker/src (app.module.ts, main.ts, entities.ts, the database module,
// migration-cli, ...) are the app's assembly: they import the features, so no feature imports them
// (a feature that did would import, through them, every other feature).
//
// Prints each cycle with one import per step that makes it, then the count, and each import of the
// assembly by a feature; exits 1 when there is either (`npm run lint` runs it). `--files` also lists
// madge's own file-level cycles (`madge --circular`).
'use strict';
const { join, relative, sep } = require('node:path');
const madge = require('madge');

const root = join(__dirname, '..');
const SRC = join(root, 'apps', 'broker', 'src');
/** Past this many, the rest are counted, not listed: a knot of N folders has up to N! cycles. */
const MAX_LISTED = 200;

/** The folder name of the files at the root of apps/broker/src: the app's assembly. */
const ASSEMBLY = '(root)';

/** `sessions/dto/x.ts` → `sessions`; `common/problem/x.ts` → `common/problem`; `main.ts` → `(root)`. */
function featureOf(file) {
  const parts = file.split('/');
  if (parts.length === 1) return ASSEMBLY;
  return parts[0] === 'common' && parts.length > 2 ? `common/${parts[1]}` : parts[0];
}

/**
 * Elementary cycles of a small directed graph, each once: a cycle is listed from its smallest node,
 * only through nodes that sort after it (so no rotation of it is found again).
 */
function elementaryCycles(edges) {
  const nodes = [...edges.keys()].sort();
  const cycles = [];
  let total = 0;
  for (const start of nodes) {
    const path = [start];
    const onPath = new Set(path);
    const walk = (node) => {
      for (const next of [...(edges.get(node)?.keys() ?? [])].sort()) {
        if (next === start) {
          total++;
          if (cycles.length < MAX_LISTED) cycles.push([...path]);
        } else if (next > start && !onPath.has(next)) {
          path.push(next);
          onPath.add(next);
          walk(next);
          onPath.delete(next);
          path.pop();
        }
      }
    };
    walk(start);
  }
  return { cycles, total };
}

/** Strongly connected components with more than one folder (Tarjan): the knots every cycle lies in. */
function knots(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let counter = 0;
  const visit = (node) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

async function main() {
  const result = await madge(SRC, {
    fileExtensions: ['ts'],
    tsConfig: join(root, 'tsconfig.json'),
    excludeRegExp: [/\.spec\.ts$/, /\.e2e-spec\.ts$/],
  });
  const graph = result.obj();
  // feature → feature → one import that makes the edge, as "from.ts → to.ts"
  const edges = new Map();
  // every "from.ts → to.ts" by which a feature imports the assembly
  const assemblyImports = [];
  for (const [file, imports] of Object.entries(graph)) {
    const from = featureOf(file);
    for (const imported of imports) {
      // Imports out of apps/broker/src (the libs, through @app/*) come back as paths starting with `..`.
      if (imported.startsWith('..')) continue;
      const to = featureOf(imported);
      if (from === to) continue;
      // Reported as such, not as the cycles through every feature that it makes (the assembly imports them all).
      if (to === ASSEMBLY) {
        if (!file.startsWith('..')) assemblyImports.push(`${file} → ${imported}`);
        continue;
      }
      if (!edges.has(from)) edges.set(from, new Map());
      if (!edges.get(from).has(to)) edges.get(from).set(to, `${file} → ${imported}`);
    }
  }
  const { cycles, total } = elementaryCycles(edges);
  const where = relative(root, SRC).split(sep).join('/');
  const pairs = [];
  for (const [from, targets] of edges) for (const to of targets.keys()) if (from < to && edges.get(to)?.has(from)) pairs.push([from, to]);
  for (const [a, b] of pairs.sort()) {
    console.log(`${a} ⇄ ${b}`);
    console.log(`  ${edges.get(a).get(b)}`);
    console.log(`  ${edges.get(b).get(a)}`);
  }
  for (const cycle of cycles) {
    console.log(`cycle: ${[...cycle, cycle[0]].join(' → ')}`);
    cycle.forEach((from, i) => console.log(`  ${edges.get(from).get(cycle[(i + 1) % cycle.length])}`));
  }
  if (total > cycles.length) console.log(`… and ${total - cycles.length} more`);
  if (process.argv.includes('--files')) {
    const files = result.circular();
    for (const cycle of files) console.log(`file cycle: ${[...cycle, cycle[0]].join(' → ')}`);
    console.log(`${files.length} file-level cycles in ${where}`);
  }
  const knotted = knots(edges);
  for (const knot of knotted) console.log(`knot of ${knot.length} folders: ${knot.join(', ')}`);
  console.log(
    `${total} cycles between the feature folders of ${where} ` +
      `(${pairs.length} pairs of folders import each other; ${knotted.length} knot${knotted.length === 1 ? '' : 's'} of ${knotted.reduce((n, k) => n + k.length, 0)} folders)`,
  );
  for (const line of assemblyImports) console.log(`feature imports the app assembly: ${line}`);
  console.log(`${assemblyImports.length} imports of the app assembly (the files at the root of ${where}) by a feature folder`);
  return total === 0 && assemblyImports.length === 0 ? 0 : 1;
}

main().then(
  (code) => (process.exitCode = code),
  (error) => {
    console.error(error);
    process.exitCode = 2;
  },
);
