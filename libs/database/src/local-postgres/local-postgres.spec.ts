import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
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
});
