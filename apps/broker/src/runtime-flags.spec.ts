/**
 * Every way the broker is started passes its V8 flags (runtime-flags.ts): the image's command,
 * `npm start`, and the benches' broker processes, which measure it as it runs in production.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BROKER_NODE_FLAGS } from './runtime-flags';

const ROOT = process.cwd(); // Jest runs from the repository root

describe('the broker runs with its V8 flags', () => {
  it('in the Dockerfile command', () => {
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'))?.[1];
    expect(JSON.parse(cmd!)).toEqual(['node', ...BROKER_NODE_FLAGS, 'dist/apps/broker/src/main.js']);
  });

  it('in npm start', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(manifest.scripts.start).toBe(`exec node ${BROKER_NODE_FLAGS.join(' ')} dist/apps/local/src/main.js`);
  });

  it('in the benches', () => {
    const stack = readFileSync(join(ROOT, 'bench/support/stack.ts'), 'utf8');
    expect(stack).toContain('spawnNode(options.main ?? BROKER_MAIN, fullEnv, [...BROKER_NODE_FLAGS, ...(options.nodeArgs ?? [])])');
  });

  it('in the simulator and the load generator of bench:sessions, so a burst after quiet measures the broker, not them', () => {
    const stack = readFileSync(join(ROOT, 'bench/support/stack.ts'), 'utf8');
    expect(stack).toContain(
      'spawnNode(options.main ?? SIM_MAIN, env, [...(options.v8Defaults ? [] : BROKER_NODE_FLAGS), ...(options.nodeArgs ?? [])])',
    );
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(manifest.scripts['bench:sessions']).toMatch(
      new RegExp(`&& node ${BROKER_NODE_FLAGS.join(' ')} dist/bench/bench/sessions/run\\.js$`),
    );
  });
});
