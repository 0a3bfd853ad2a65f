/**
 * The PostgreSQL server process: started, waited for, stopped, crashed on purpose (drills), and
 * the orphan an earlier `kill -9` left behind.
 *
 * The server runs in its own process group, so a Ctrl-C in the terminal reaches the app, which
 * closes its pool first and then stops the server. A server orphaned by a `kill -9` of the app is
 * found through `postmaster.pid` and stopped at the next start; its data is intact.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { Binaries, RunAs } from './binaries';
import { giveToServerUser } from './data-folder';
import { LocalPostgresError } from './errors';

const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
/** Pid of the Node process that started the server, kept beside the cluster. */
const OWNER_FILE = 'owner.pid';

/**
 * Makes this process the cluster's owner. A server whose owner is still alive is in use (a second
 * `npm start` on the same DATA_DIR) and is left alone; one whose owner is gone is an orphan.
 */
export async function claimCluster(clusterDir: string, log: (line: string) => void): Promise<void> {
  const ownerFile = join(clusterDir, OWNER_FILE);
  const owner = Number((await readFile(ownerFile, 'utf8').catch(() => '')).trim());
  if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner) && (await serverRunning(clusterDir))) {
    throw new LocalPostgresError(
      `the PostgreSQL cluster in ${clusterDir} is in use by process ${owner}; stop that process or use another DATA_DIR`,
    );
  }
  await stopOrphan(clusterDir, log);
}

/** Written once the cluster is claimed and initialised, before the server starts. */
export async function recordOwner(clusterDir: string): Promise<void> {
  await writeFile(join(clusterDir, OWNER_FILE), `${process.pid}\n`);
}

async function serverRunning(clusterDir: string): Promise<boolean> {
  const pid = await postmasterPid(clusterDir);
  return pid !== undefined && alive(pid);
}

async function postmasterPid(clusterDir: string): Promise<number | undefined> {
  const pid = Number((await readFile(join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

async function stopOrphan(clusterDir: string, log: (line: string) => void): Promise<void> {
  const pid = await postmasterPid(clusterDir);
  if (pid === undefined || !alive(pid)) return;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (cmdline && !cmdline.includes('postgres')) return; // a reused pid: postgres cleans a stale file itself
  log(`stopping a PostgreSQL server (pid ${pid}) left running by an earlier process`);
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (alive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGKILL');
      break;
    }
    await sleep(100);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A TCP port on 127.0.0.1 with nothing listening on it now, for a server started without one. */
export function unusedPort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export function spawnServer(
  binaries: Binaries,
  clusterDir: string,
  port: number,
  runAs: RunAs,
  settings: Record<string, string>,
): ChildProcess {
  const logFd = openSync(join(clusterDir, 'server.log'), 'a');
  giveToServerUser(join(clusterDir, 'server.log'), runAs);
  try {
    return spawn(
      binaries.postgres,
      [
        '-D',
        clusterDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'max_connections=300',
        ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      // Own process group: a terminal's Ctrl-C reaches the app, which stops the server in order.
      { ...runAs, cwd: tmpdir(), detached: true, stdio: ['ignore', logFd, logFd] },
    );
  } finally {
    closeSync(logFd);
  }
}

/** Until the server answers on `url`: a refused password is an answer too (the caller sorts the password out). */
export async function waitUntilReady(adminUrl: string, child: ChildProcess, clusterDir: string): Promise<void> {
  let exited: string | undefined;
  child.once('exit', (code, signal) => (exited = `exited with ${code ?? signal}`));
  child.once('error', (error) => (exited = error.message));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (exited) throw new LocalPostgresError(`PostgreSQL ${exited}: ${await lastLogLine(clusterDir)}`);
    const client = new Client({ connectionString: adminUrl, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (error) {
      if ((error as { code?: string }).code === '28P01') return;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new LocalPostgresError(
          `PostgreSQL did not accept connections within ${READY_TIMEOUT_MS / 1000}s: ${await lastLogLine(clusterDir)}`,
        );
      }
      await sleep(50);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

async function lastLogLine(clusterDir: string): Promise<string> {
  const text = await readFile(join(clusterDir, 'server.log'), 'utf8').catch(() => '');
  const lines = text
    .trim()
    .split('\n')
    .filter((l) => /FATAL|ERROR|PANIC|could not/.test(l));
  return lines.pop() ?? text.trim().split('\n').pop() ?? 'no log';
}

export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

function running(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Fast shutdown: active connections are closed, data is flushed. */
export async function stopServer(child: ChildProcess): Promise<void> {
  if (!running(child)) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * Kills the server as a crash would: SIGKILL to the postmaster and to every one of its processes,
 * nothing flushed, no shutdown checkpoint; the next start runs crash recovery from the WAL.
 */
export async function crashServer(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || !running(child)) return;
  const children = (spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout ?? '')
    .split('\n')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGKILL');
  for (const backend of children) {
    try {
      process.kill(backend, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  await exited;
  for (let i = 0; i < 200 && children.some(alive); i++) await sleep(25);
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
