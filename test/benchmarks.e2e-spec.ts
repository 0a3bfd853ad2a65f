/**
 * Every benchmark the README names, run as a user runs it from a fresh clone (`npm run bench:NAME`, which
 * compiles the bench into dist/bench itself), in its shortest mode: so a benchmark cannot rot unseen. Each
 * must exit 0 and print its JSON result; the figures themselves are not judged here (2 shared cores).
 * Each starts its own PostgreSQL, as it does without DATABASE_URL. And a benchmark that fails stops what it
 * started: no PostgreSQL, data folder or child process is left behind.
 */
import { jest } from '@jest/globals';
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(900_000);

interface Finished {
  code: number | null;
  output: string;
}

/** Runs `command args` with DATABASE_URL unset (a fresh clone's default) and `env` over the rest. */
function run(command: string, args: string[], env: Record<string, string> = {}): Promise<Finished> {
  const { DATABASE_URL: _unset, ...inherited } = process.env;
  const child = spawn(command, args, { env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // Bounded: a benchmark that hangs fails the test instead of holding the suite.
  const timer = setTimeout(() => child.kill('SIGKILL'), 840_000);
  return new Promise((done) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      done({ code, output });
    }),
  );
}

/** The benchmark's one JSON object: from the first line that is `{` to the last that is `}`. */
function result(output: string): Record<string, unknown> {
  const lines = output.split('\n');
  const first = lines.indexOf('{');
  const last = lines.lastIndexOf('}');
  if (first < 0 || last < first) throw new Error(`no JSON result in:\n${output}`);
  return JSON.parse(lines.slice(first, last + 1).join('\n')) as Record<string, unknown>;
}

/** Processes whose command line names `path` (a server or child left behind), this one excepted. */
async function processesNaming(path: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(path)) found.push(`${pid}: ${cmdline.replaceAll('\0', ' ')}`);
  }
  return found;
}

describe('benchmarks from a fresh clone, shortest mode', () => {
  beforeAll(() => rm('dist/bench', { recursive: true, force: true }));

  it.each([
    // Each one's README line, with the arguments that make it shortest, and a field its result always has.
    ['webhooks', ['--deliveries=50', '--rounds=1'], 'ratioWholePath'],
    ['breaker', ['--calls=2000', '--rounds=1', '--warmup=0'], 'contenders'],
    ['health', ['--amount=200', '--rounds=1', '--warmup=100', '--connections=4'], 'ratio'],
    ['cluster', ['--trials=2', '--seconds=1', '--connections=4'], 'trials'],
    ['failover', ['--steady-ms=1000', '--close-after-ms=200'], 'failedCreates'],
    [
      'sessions',
      ['--amount=100', '--rounds=1', '--warmup=50', '--quiets=1', '--burst-seconds=1', '--numbers=20', '--connections=4'],
      'brokerCpuVsFloor',
    ],
    [
      'sessions',
      ['--postgres-ab', '--amount=50', '--rounds=1', '--warmup=20', '--numbers=10', '--connections=2'],
      'baseOverMinimalPostgres',
    ],
  ])('npm run bench:%s -- %j exits 0 with its JSON result', async (name, args, field) => {
    const finished = await run('npm', ['run', '--silent', `bench:${name}`, '--', ...args]);
    if (finished.code !== 0) throw new Error(`bench:${name} exited ${finished.code}:\n${finished.output.slice(-8000)}`);
    expect(JSON.stringify(result(finished.output))).toContain(`"${field}"`);
  });

  it('a benchmark that fails stops the PostgreSQL, data folder and processes it started', async () => {
    // The webhooks bench as built above, made to fail after it has started PostgreSQL and its receiver:
    // without the ops page the broker app cannot start (the fresh-clone crash of issue #33).
    await rm('dist/bench/apps/broker/src/ops/assets', { recursive: true, force: true });
    const tmp = await mkdtemp(join(tmpdir(), 'bench-fails-'));
    await chmod(tmp, 0o755);
    try {
      const finished = await run(process.execPath, ['dist/bench/bench/webhooks/run.js', '--deliveries=10', '--rounds=1'], { TMPDIR: tmp });
      expect(finished.code).toBe(1);
      expect(finished.output).toContain('ops.html cannot be read (ENOENT)');
      // Its PostgreSQL ran in a data folder under TMPDIR: the folder is gone and nothing runs from it.
      expect(await readdir(tmp)).toEqual([]);
      expect(await processesNaming(tmp)).toEqual([]);
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
