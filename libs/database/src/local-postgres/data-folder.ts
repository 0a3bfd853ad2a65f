/**
 * Where the cluster's files live and who may enter them: the data folder must be reachable by the
 * user the server runs as, and the cluster folder is that user's alone (PostgreSQL checks 0700).
 */
import { spawnSync } from 'node:child_process';
import { chmod, chown, mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SUPERUSER, type RunAs } from './binaries';
import { LocalPostgresError } from './errors';

/**
 * The folder to keep clusters in: `dataDir`, or, for a checkout inside a folder the server's user
 * cannot enter (say /root), a folder under the OS temp folder instead, said once.
 */
export async function usableDataRoot(dataDir: string, runAs: RunAs, log: (line: string) => void): Promise<string> {
  try {
    await makeDirectory(dataDir);
    if (!(await stat(dataDir)).isDirectory()) throw new Error('not a directory');
  } catch (error) {
    throw new LocalPostgresError(`data folder ${dataDir} cannot be used: ${(error as Error).message}`);
  }
  if (runAs.uid === undefined || traversable(dataDir, runAs)) return dataDir;
  const fallback = join(tmpdir(), `session-broker-pg-${Buffer.from(dataDir).toString('base64url').slice(-40)}`);
  await mkdir(fallback, { recursive: true });
  log(`'${SUPERUSER.name}' cannot enter ${dataDir}; keeping the PostgreSQL cluster in ${fallback}`);
  return fallback;
}

/** The cluster folder, created if missing, owned by the server's user and closed to everyone else. */
export async function ownedClusterDir(clusterDir: string, runAs: RunAs): Promise<void> {
  await mkdir(clusterDir, { recursive: true, mode: 0o700 });
  await chmod(clusterDir, 0o700);
  if (runAs.uid !== undefined) await chown(clusterDir, runAs.uid, runAs.gid!);
}

/** Hands a file the server writes (its log) to the server's user. */
export function giveToServerUser(file: string, runAs: RunAs): void {
  if (runAs.uid !== undefined) spawnSync('chown', [`${runAs.uid}:${runAs.gid}`, file]);
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
