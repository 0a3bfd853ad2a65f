import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { LocalPostgres } from './local-postgres';

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new Client(url);
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

describe('LocalPostgres', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'local-pg-'));
    await chmod(dataDir, 0o755);
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('keeps its data across a stop and a start', async () => {
    const first = await LocalPostgres.start({ dataDir, database: 'broker' });
    await query(first.url, 'CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)');
    await first.stop();

    const second = await LocalPostgres.start({ dataDir, database: 'broker', ephemeral: true });
    expect(await query(second.url, 'SELECT x FROM kept')).toEqual([{ x: 42 }]);
    await second.stop();
  }, 60_000);

  it('stops a server orphaned by a killed process and starts on the same data', async () => {
    const orphan = await LocalPostgres.start({ dataDir, database: 'broker' });
    await query(orphan.url, 'CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)');
    const orphanPid = Number((await readFile(join(orphan.clusterDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    // The process that started `orphan` is "gone": nobody calls orphan.stop().

    const lines: string[] = [];
    const next = await LocalPostgres.start({ dataDir, database: 'broker', ephemeral: true, log: (l) => lines.push(l) });
    expect(lines.join('\n')).toContain(`pid ${orphanPid}`);
    expect(spawnSync('kill', ['-0', String(orphanPid)]).status).not.toBe(0);
    expect(await query(next.url, 'SELECT x FROM kept')).toEqual([{ x: 7 }]);
    await next.stop();
  }, 60_000);
  it('protects a new data folder with a password of its own, kept owner-only, never the old built-in one', async () => {
    const server = await LocalPostgres.start({ dataDir, database: 'broker', ephemeral: true });
    try {
      const file = join(dataDir, 'postgres-superuser-password');
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      const password = (await readFile(file, 'utf8')).trim();
      expect(password).toMatch(/^[0-9a-f]{48}$/);
      expect(server.url).toBe(`postgres://postgres:${password}@127.0.0.1:${server.port}/broker`);
      await expect(query(`postgres://postgres:postgres@127.0.0.1:${server.port}/broker`, 'SELECT 1')).rejects.toMatchObject({
        code: '28P01',
      });
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('moves a data folder made with the old built-in password to a password of its own, keeping its data', async () => {
    // A folder as the previous version left it: the superuser's password `postgres`, no password file.
    const old = await LocalPostgres.start({ dataDir, database: 'broker' });
    await query(old.url, "CREATE TABLE kept (x int); INSERT INTO kept VALUES (29); ALTER ROLE postgres PASSWORD 'postgres'");
    await old.stop();
    await rm(join(dataDir, 'postgres-superuser-password'));

    const lines: string[] = [];
    const next = await LocalPostgres.start({ dataDir, database: 'broker', log: (l) => lines.push(l) });
    try {
      const password = (await readFile(join(dataDir, 'postgres-superuser-password'), 'utf8')).trim();
      expect(password).toMatch(/^[0-9a-f]{48}$/);
      expect(await query(next.url, 'SELECT x FROM kept')).toEqual([{ x: 29 }]);
      await expect(query(`postgres://postgres:postgres@127.0.0.1:${next.port}/broker`, 'SELECT 1')).rejects.toMatchObject({
        code: '28P01',
      });
    } finally {
      await next.stop();
    }
    // And it starts again with it.
    const again = await LocalPostgres.start({ dataDir, database: 'broker', ephemeral: true });
    expect(await query(again.url, 'SELECT x FROM kept')).toEqual([{ x: 29 }]);
    await again.stop();
  }, 90_000);
});
