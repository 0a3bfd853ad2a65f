/**
 * The README's first two walkthroughs, "From clone to a verified webhook" and "A tour", run as a new user
 * runs them, in order, on ports other than the defaults (PORT, SIM_PORT and DATA_DIR exported, as the README
 * says): terminal 1's `npm start` (the build is done: `npm install` is skipped), terminal 3's receiver, and
 * every other command in one bash session (terminal 2), each answer checked against the `# →` lines the
 * README shows under it. `…` in an answer stands for anything; runs of spaces count as one; several `# →`
 * lines are the output's lines in order, and one line stands for every line of the output.
 */
import { jest } from '@jest/globals';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOnce, eventually, freePort, type RunningProcess } from './support/processes';

jest.setTimeout(600_000);

const ROOT = process.cwd();
const RECEIVER_PORT = 4000; // the README's

interface Step {
  command: string;
  answers: string[];
  /** Where it is in the README, for the failure message. */
  line: number;
}

/** The steps of the first sh block after `heading`: a command (with its continuation lines) and the `# →` lines under it. */
function stepsOf(readme: string, heading: string): Step[] {
  const lines = readme.split('\n');
  const at = lines.indexOf(heading);
  if (at === -1) throw new Error(`README has no "${heading}"`);
  const open = lines.indexOf('```sh', at);
  const close = lines.indexOf('```', open + 1);
  const steps: Step[] = [];
  let command: string[] = [];
  let startedAt = 0;
  let inLoop = false;
  for (let i = open + 1; i < close; i++) {
    const line = lines[i];
    const answer = /^# → (.*)$/.exec(line);
    if (answer) {
      steps[steps.length - 1].answers.push(answer[1]);
      continue;
    }
    if (line.trim() === '' || (line.startsWith('#') && command.length === 0)) continue;
    if (command.length === 0) startedAt = i + 1;
    command.push(line);
    if (/^for /.test(line)) inLoop = true;
    if (/^done\b/.test(line)) inLoop = false;
    if (!line.endsWith('\\') && !inLoop) {
      steps.push({ command: command.join('\n'), answers: [], line: startedAt });
      command = [];
    }
  }
  return steps;
}

function pattern(answer: string): RegExp {
  const escaped = answer
    .trim()
    .replace(/\s+/g, ' ')
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${escaped}$`);
}

/** Every output line matches its answer (several answers: one per line, in order; one answer: each line). */
function mismatch(output: string, answers: string[]): string | null {
  const lines = output
    .split('\n')
    .map((l) => l.trim().replace(/\s+/g, ' '))
    .filter(Boolean);
  if (answers.length === 0) return null;
  if (answers.length > 1 && answers.length !== lines.length) return `${lines.length} lines where the README shows ${answers.length}`;
  for (const [i, line] of lines.entries()) {
    const answer = answers.length === 1 ? answers[0] : answers[i];
    if (!pattern(answer).test(line)) return `"${line}" is not "${answer}"`;
  }
  return lines.length === 0 ? 'no output' : null;
}

/** Terminal 2: one bash whose variables last from command to command; each command's stdout, then its exit status. */
class Terminal {
  private readonly bash: ChildProcessWithoutNullStreams;
  private out = '';
  private errors = '';
  private count = 0;

  constructor(env: NodeJS.ProcessEnv) {
    this.bash = spawn('bash', ['--noprofile', '--norc'], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.bash.stdout.on('data', (chunk: Buffer) => (this.out += chunk.toString()));
    this.bash.stderr.on('data', (chunk: Buffer) => (this.errors += chunk.toString()));
  }

  async run(command: string): Promise<{ output: string; status: number; stderr: string }> {
    const marker = `__step_${++this.count}_done__`;
    this.out = '';
    this.errors = '';
    this.bash.stdin.write(`${command}\necho; echo "${marker} $?"\n`);
    let match: RegExpExecArray | null = null;
    await eventually(() => Promise.resolve((match = new RegExp(`${marker} (\\d+)`).exec(this.out)) !== null), 3_000, 100);
    return { output: this.out.slice(0, match!.index), status: Number(match![1]), stderr: this.errors };
  }

  async close(): Promise<void> {
    if (this.bash.exitCode !== null) return;
    const exited = new Promise((done) => this.bash.once('exit', done));
    this.bash.stdin.end('exit\n');
    await exited;
  }
}

/**
 * Terminals 1 and 3: a command in a process group of its own, as a terminal runs it, so that stopping it
 * stops npm and whatever npm started (a signal to npm alone can leave its child running).
 */
function startInTerminal(command: string, env: NodeJS.ProcessEnv): RunningProcess {
  const child = spawn('bash', ['-c', command], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  return { child, output: () => out, exited };
}

/** Ctrl-C in that terminal: SIGINT to the whole group, then wait until nothing of it is left. */
async function stopTerminal(running: RunningProcess): Promise<void> {
  const group = -running.child.pid!;
  const alive = () => {
    try {
      process.kill(group, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(group, 'SIGINT');
  await eventually(() => Promise.resolve(!alive()), 300, 100).catch(() => process.kill(group, 'SIGKILL'));
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

describe("the README's walkthroughs, in order, on other ports", () => {
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let broker: RunningProcess | undefined;
  let receiver: RunningProcess | undefined;
  let terminal: Terminal | undefined;

  beforeAll(async () => {
    buildOnce();
    dataDir = await mkdtemp(join(tmpdir(), 'readme-tour-'));
    await chmod(dataDir, 0o755);
    env = {
      ...process.env,
      PORT: String(await freePort()),
      SIM_PORT: String(await freePort()),
      DATA_DIR: dataDir,
      // As on a new user's machine: none of the suite's own settings.
      DATABASE_URL: '',
      PROVIDERS: '',
      BROKER_URL: '',
      ADMIN_TOKEN: '',
      WEBHOOK_SECRET: '',
      LOG_FORMAT: 'json',
    };
  }, 600_000);

  afterAll(async () => {
    await terminal?.close();
    for (const running of [receiver, broker]) if (running) await stopTerminal(running);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('gets every answer the README shows', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const steps = [...stepsOf(readme, '## From clone to a verified webhook'), ...stepsOf(readme, '## A tour')];
    expect(await portIsFree(RECEIVER_PORT)).toBe(true);
    terminal = new Terminal(env);
    let webhookSecret = '';

    for (const step of steps) {
      const where = `README.md:${step.line}: ${step.command.split('\n')[0]}`;
      if (step.command === 'npm install && npm start') {
        // Terminal 1. The suite has installed and built: npm start's own build step finds nothing to compile.
        broker = startInTerminal('npm start', env);
        await eventually(async () => (await fetch(`http://127.0.0.1:${env.PORT}/health/ready`)).ok, 600);
        expect(broker.output()).toMatch(/development API key sk_dev_\S+… in /);
        continue;
      }
      if (/npm run receive-webhooks$/.test(step.command)) {
        // Terminal 3, with the secret terminal 2 was shown.
        expect(webhookSecret).toMatch(/^whsec_/);
        const command = step.command.replace('whsec_…', webhookSecret);
        receiver = startInTerminal(command, env);
        await eventually(() =>
          Promise.resolve(
            step.answers.some((answer) =>
              receiver!
                .output()
                .split('\n')
                .some((l) => pattern(answer).test(l.trim())),
            ),
          ),
        );
        continue;
      }
      const { output, status, stderr } = await terminal.run(step.command);
      expect({ where, status, stderr: status === 0 ? '' : stderr }).toEqual({ where, status: 0, stderr: '' });
      expect({ where, mismatch: mismatch(output, step.answers) }).toEqual({ where, mismatch: null });
      webhookSecret ||= /"webhookSecret":"(whsec_[^"]+)"/.exec(output)?.[1] ?? '';
      if (/\$BROKER\/v1\/sessions -H/.test(step.command) && receiver) {
        // "terminal 3 prints verified session.created: session …"
        await eventually(() => Promise.resolve(/verified session\.created: session /.test(receiver!.output())));
      }
    }
    // Every step ran: the broker, the receiver and terminal 2's commands.
    expect(broker).toBeDefined();
    expect(receiver).toBeDefined();
    expect(steps.filter((s) => s.answers.length > 0).length).toBeGreaterThanOrEqual(10);
  });
});
