/**
 * Two or more pgbench scripts against one PostgreSQL, rounds interleaved, the order alternating by round (after a
 * 2 s warm-up of each): per variant, transactions per second (pgbench's figure) and PostgreSQL's CPU per
 * transaction (/proc: postmaster, backends and workers). Used by the benches that compare two shapes of the same
 * SQL (bench/webhooks/close-pgbench.ts, bench/sessions/idempotency-pgbench.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parentPid, postgresCpuMs } from './cpu';
import { withClient } from './pool-rule';
import { median, ratio, round } from './stats';

export interface PgbenchAbOptions {
  databaseUrl: string;
  /** Variant name → pgbench script; the first two are compared (`ratio`: first over second). */
  variants: Record<string, string>;
  rounds: number;
  seconds: number;
  clients: number;
  /** The pgbench executable. */
  pgbench: string;
}

export interface PgbenchFigures {
  tps: number;
  postgresCpuMsPerTransaction: number;
}

export async function pgbenchAb(options: PgbenchAbOptions) {
  const dir = await mkdtemp(join(tmpdir(), 'pgbench-ab-'));
  try {
    const postmaster = await withClient(options.databaseUrl, async (c) =>
      parentPid((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid),
    );
    for (const [name, script] of Object.entries(options.variants)) await writeFile(join(dir, `${name}.sql`), script);
    const url = new URL(options.databaseUrl);
    const run = (name: string, seconds: number): PgbenchFigures => {
      const cpu0 = postgresCpuMs(postmaster);
      const out = execFileSync(
        options.pgbench,
        [
          '-n',
          '-M',
          'prepared',
          '-c',
          String(options.clients),
          '-j',
          '2',
          '-T',
          String(seconds),
          '-f',
          join(dir, `${name}.sql`),
          '-h',
          url.hostname,
          '-p',
          url.port,
          '-U',
          decodeURIComponent(url.username),
          url.pathname.slice(1),
        ],
        { encoding: 'utf8', env: { ...process.env, PGPASSWORD: decodeURIComponent(url.password) } },
      );
      const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
      const transactions = Number(/number of transactions actually processed: (\d+)/.exec(out)?.[1]);
      const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0);
      if (!transactions || failed) throw new Error(`pgbench ${name}: ${out}`);
      return { tps: round(tps, 0), postgresCpuMsPerTransaction: round((postgresCpuMs(postmaster) - cpu0) / transactions, 3) };
    };
    const names = Object.keys(options.variants);
    for (const name of names) run(name, 2); // warm-up
    const rounds: Array<Record<string, PgbenchFigures>> = [];
    for (let r = 0; r < options.rounds; r++) {
      const order = r % 2 === 0 ? names : [...names].reverse();
      const result: Record<string, PgbenchFigures> = {};
      for (const name of order) result[name] = run(name, options.seconds);
      rounds.push(result);
      console.error(`round ${r + 1}: ${JSON.stringify(result)} load ${loadavg()[0].toFixed(1)}`);
    }
    const summary = Object.fromEntries(
      (['tps', 'postgresCpuMsPerTransaction'] as const).map((key) => {
        const medians = Object.fromEntries(names.map((name) => [name, median(rounds.map((x) => x[name][key]))]));
        return [key, { ...medians, ratio: ratio(medians[names[0]], medians[names[1]]) }];
      }),
    );
    return { clients: options.clients, seconds: options.seconds, summary, rounds, load: loadavg() };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
