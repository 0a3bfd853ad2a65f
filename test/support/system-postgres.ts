import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { TestDatabase } from '@app/testing';
import { ensureDebianPackage } from './debian-package';
import { eventually, freePort } from './processes';

const BASE = '/usr/lib/postgresql';

/** A throwaway server of Debian's PostgreSQL, on loopback with trust, in a directory of its own. */
export interface SystemPostgres {
  /** Its bin directory (pg_dump and pg_restore of the same version are there). */
  bin: string;
  /** A scratch directory removed with the server. */
  dir: string;
  url(database: string): string;
  /** A database on it for a broker harness, which leaves it in place (it goes with the server). */
  database(name: string): TestDatabase;
  /** Runs one statement on the `postgres` database; its rows. */
  admin<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  /** What the server wrote to stderr so far (its log, with `logging_collector` off). */
  log(): string;
  stop(): Promise<void>;
}

/** The newest /usr/lib/postgresql/<major>/bin that has each of `tools`. */
function newestWith(tools: string[]): string | undefined {
  const majors = existsSync(BASE) ? readdirSync(BASE).filter((v) => /^\d+$/.test(v)) : [];
  return majors
    .sort((a, b) => Number(b) - Number(a))
    .map((major) => join(BASE, major, 'bin'))
    .find((bin) => tools.every((tool) => existsSync(join(bin, tool))));
}

function run(bin: string, args: string[], asPostgres: { uid: number; gid: number } | null): void {
  const result = spawnSync(bin, args, { encoding: 'utf8', timeout: 120_000, cwd: tmpdir(), ...(asPostgres ?? {}) });
  if (result.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed: ${result.stderr || result.error?.message}`);
}

/**
 * Starts Debian's PostgreSQL: `major` (its package `postgresql-<major>` installed when missing, as root with apt),
 * else the newest one that has `tools` (the `postgresql` package when none has). As root the server runs as
 * `postgres`, which it requires.
 */
export async function startSystemPostgres(options: { major?: number; tools?: string[] } = {}): Promise<SystemPostgres> {
  const tools = ['initdb', 'postgres', ...(options.tools ?? [])];
  let bin: string | undefined;
  if (options.major !== undefined) {
    bin = join(BASE, String(options.major), 'bin');
    ensureDebianPackage(join(bin, 'postgres'), `postgresql-${options.major}`);
  } else {
    if (!newestWith(tools)) ensureDebianPackage(BASE, 'postgresql');
    bin = newestWith(tools);
  }
  const missing = tools.filter((tool) => !bin || !existsSync(join(bin, tool)));
  if (!bin || missing.length > 0)
    throw new Error(
      `no Debian PostgreSQL with ${missing.join(', ')} in ${bin ?? BASE}: apt-get install -y postgresql${options.major ? `-${options.major}` : ''}`,
    );

  const root = process.getuid?.() === 0;
  const asPostgres = root
    ? {
        uid: Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()),
        gid: Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()),
      }
    : null;
  const dir = await mkdtemp(join(tmpdir(), 'system-postgres-'));
  await chmod(dir, 0o755);
  if (asPostgres) await chown(dir, asPostgres.uid, asPostgres.gid);
  const cluster = join(dir, 'cluster');
  run(
    join(bin, 'initdb'),
    [`--pgdata=${cluster}`, '--username=postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
    asPostgres,
  );
  const port = await freePort();
  const args = ['-D', cluster, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'];
  const server: ChildProcess = spawn(join(bin, 'postgres'), args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: tmpdir(),
    ...(asPostgres ?? {}),
  });
  const logged: string[] = [];
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => logged.push(chunk));
  const exited = new Promise<void>((done) => server.once('exit', () => done()));

  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const database = (name: string): TestDatabase => ({ url: url(name), name, drop: () => Promise.resolve() });
  const admin = async <T>(sql: string): Promise<T[]> => {
    const client = new Client({ connectionString: url('postgres') });
    await client.connect();
    try {
      return (await client.query(sql)).rows as T[];
    } finally {
      await client.end();
    }
  };
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGINT'); // fast shutdown
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await eventually(() => admin('SELECT 1').then(() => true));
  } catch (error) {
    await stop();
    throw new Error(`Debian's PostgreSQL in ${bin} did not start: ${(error as Error).message}\n${logged.join('')}`);
  }
  return { bin, dir, url, database, admin, log: () => logged.join(''), stop };
}
