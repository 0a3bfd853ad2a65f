import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

import { freePort } from '@app/testing';

export { freePort };

/** Builds dist/ once for the tests that run the product as `npm start` does. */
export function buildOnce(): void {
  const result = spawnSync('npm', ['run', 'build', '--silent'], { encoding: 'utf8', timeout: 240_000 });
  if (result.status !== 0) throw new Error(`npm run build failed: ${result.stdout}${result.stderr}`);
}

export interface RunningProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `command` (node by default) with `args`; the environment is this process's with `env` over it. */
export function startProcess(args: string[], env: Record<string, string>, command: string = process.execPath): RunningProcess {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return { child, output: () => out, exited };
}

/** Polls until `check` resolves true; counts attempts, never measures elapsed time. */
export async function eventually(check: () => Promise<boolean>, attempts = 300, pauseMs = 100): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await check().catch(() => false)) return;
    await new Promise((done) => setTimeout(done, pauseMs));
  }
  throw new Error('condition not met in time');
}
