/**
 * PostgreSQL's CPU per create, with no broker process running: the minimal allocation and the broker's create statement
 * on a provider that keeps no sessions (SessionReservationRepository's, sent by thin clients), alternated on one
 * throwaway server, rounds rotating which goes first. With `--variant=FILE`, a third contender: the create statement
 * after FILE's SQL (say, a `CREATE OR REPLACE FUNCTION broker_create_session`) has run; the build's own functions are
 * put back before each of the base's phases (or `--base=FILE`'s SQL is run instead). Each pair of the same round gives
 * variant ÷ base, so a change to the create's functions is measured A/B in one run.
 *
 * `--statements`: pg_stat_statements with nested statements tracked; the last round's statements of each create
 * contender, execution ms per create (wall time inside PostgreSQL, so under 16 connections on two cores it includes
 * waiting for a core: compare shares, or run with `--connections=1`).
 *
 * Set-up as run.ts: the broker (migrations, account, API key) and the provider without sessions with its numbers added
 * through the admin API; both are stopped before the first phase. Usage:
 *   npm run bench:sessions -- --postgres-ab [--variant=FILE] [--base=FILE] [--statements] [--rounds=6 --amount=2000 --connections=16]
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { Client } from 'pg';
import { brokerCreateStatement, minimalAllocation } from './create-statements';
import { DIRECT_PROVIDER, startDirectBroker } from './direct-provider';
import { ownCpuMs, parentPid, postgresCpuMs } from '../support/cpu';
import { resetSessions, withClient } from '../support/pool-rule';
import { startBrokerProcess, startDatabase, startSimulatorProcess } from '../support/stack';
import { median, numberArg, round } from '../support/stats';

/** The functions a create statement runs, whose definitions the base puts back. */
const CREATE_FUNCTIONS = ['broker_create_session', 'broker_reserve_session'];

type Work = (client: Client, accountId: string) => Promise<void>;

interface PhaseFigures {
  perSecond: number;
  /** PostgreSQL's CPU ms per create (postmaster, backends and workers, from /proc). */
  postgresMs: number;
  /** The thin clients' CPU ms per create (this process). */
  clientMs: number;
}

interface Contender {
  name: 'minimal' | 'base' | 'variant';
  work: Work;
  /** SQL run before each of its phases. */
  setUp?: string;
}

function fileArg(name: string): string | undefined {
  const path = process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  return path === undefined ? undefined : readFileSync(path, 'utf8');
}

async function phase(
  url: string,
  accountId: string,
  amount: number,
  connections: number,
  work: Work,
  postmaster: number,
): Promise<PhaseFigures> {
  const clients = await Promise.all(
    Array.from({ length: connections }, async () => {
      const client = new Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  try {
    // Each connection prepares its statement (and plans the functions) before the clock starts.
    for (const client of clients) await work(client, accountId);
    let left = amount;
    const postgresBefore = postgresCpuMs(postmaster);
    const clientBefore = ownCpuMs();
    const started = performance.now();
    await Promise.all(
      clients.map(async (client) => {
        while (left-- > 0) await work(client, accountId);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    return {
      perSecond: round(amount / seconds, 1),
      postgresMs: round((postgresCpuMs(postmaster) - postgresBefore) / amount, 3),
      clientMs: round((ownCpuMs() - clientBefore) / amount, 3),
    };
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

/** Execution ms per create of each statement pg_stat_statements saw since its last reset, slowest first. */
async function statementsPerCreate(
  url: string,
  creates: number,
): Promise<Array<{ calls: number; msPerCreate: number; statement: string }>> {
  return withClient(url, async (c) =>
    (
      await c.query<{ calls: string; total: number; query: string }>(
        `SELECT calls, total_exec_time AS total, query FROM pg_stat_statements
          WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT 12`,
      )
    ).rows.map((r) => ({
      calls: Number(r.calls),
      msPerCreate: round(r.total / creates, 4),
      statement: r.query.replace(/\s+/g, ' ').slice(0, 160),
    })),
  );
}

export async function postgresAb(): Promise<void> {
  const connections = numberArg('connections', 16);
  const amount = numberArg('amount', 2000);
  const rounds = numberArg('rounds', 6);
  const warmup = numberArg('warmup', 1000);
  const withStatements = process.argv.includes('--statements');
  const variant = fileArg('variant');
  const db = await startDatabase('bench_postgres_ab', {
    settings: withStatements ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' } : {},
  });
  try {
    const sim = await startSimulatorProcess();
    const env = { SESSION_SWEEP_INTERVAL_MS: '3600000', BREAKER_HEALTH_INTERVAL_MS: '3600000' };
    const broker = await startBrokerProcess(db.url, sim.url, env);
    try {
      const direct = await startDirectBroker(db.url, sim.url, env, numberArg('numbers', 100));
      await direct.stop();
    } finally {
      await broker.stop();
      await sim.stop();
    }
    const accountId = await withClient(
      db.url,
      async (c) => (await c.query<{ account_id: string }>('SELECT account_id FROM api_keys LIMIT 1')).rows[0].account_id,
    );
    const postmaster = await withClient(db.url, async (c) =>
      parentPid((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid),
    );
    const buildsFunctions = () =>
      withClient(db.url, async (c) =>
        (
          await c.query<{ definition: string }>(
            `SELECT pg_get_functiondef(p.oid) AS definition FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'public' AND p.proname = ANY($1)`,
            [CREATE_FUNCTIONS],
          )
        ).rows
          .map((r) => `${r.definition};`)
          .join('\n'),
      );
    if (withStatements) await withClient(db.url, (c) => c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements'));
    const minimal: Work = (client, account) => minimalAllocation(client, account, DIRECT_PROVIDER);
    const contenders: Contender[] = [
      { name: 'minimal', work: minimal },
      // The build's functions are put back only where a variant replaces them.
      { name: 'base', work: brokerCreateStatement, setUp: fileArg('base') ?? (variant ? await buildsFunctions() : undefined) },
      ...(variant ? [{ name: 'variant' as const, work: brokerCreateStatement, setUp: variant }] : []),
    ];
    const figures: Record<Contender['name'], PhaseFigures[]> = { minimal: [], base: [], variant: [] };
    const statements: Record<string, Awaited<ReturnType<typeof statementsPerCreate>>> = {};
    await resetSessions(db.url);
    for (const contender of contenders) {
      if (contender.setUp) await withClient(db.url, (c) => c.query(contender.setUp!));
      await phase(db.url, accountId, warmup, connections, contender.work, postmaster);
    }
    for (let i = 0; i < rounds; i++) {
      for (let j = 0; j < contenders.length; j++) {
        const contender = contenders[(i + j) % contenders.length];
        if (contender.setUp) await withClient(db.url, (c) => c.query(contender.setUp!));
        await resetSessions(db.url);
        if (withStatements) await withClient(db.url, (c) => c.query('SELECT pg_stat_statements_reset()'));
        figures[contender.name].push(await phase(db.url, accountId, amount, connections, contender.work, postmaster));
        if (withStatements && i === rounds - 1 && contender.name !== 'minimal')
          statements[contender.name] = await statementsPerCreate(db.url, amount + connections);
      }
    }
    const medians = (list: PhaseFigures[]) =>
      list.length === 0
        ? undefined
        : {
            perSecond: round(median(list.map((f) => f.perSecond)), 1),
            postgresMs: round(median(list.map((f) => f.postgresMs)), 3),
            clientMs: round(median(list.map((f) => f.clientMs)), 3),
          };
    const pairs = (over: PhaseFigures[], under: PhaseFigures[]) => over.map((f, i) => round(f.postgresMs / under[i].postgresMs, 3));
    const variantOverBase = pairs(figures.variant, figures.base);
    console.log(
      JSON.stringify(
        {
          benchmark: 'sessions --postgres-ab',
          how: 'PostgreSQL CPU ms per create from /proc, thin clients only, contenders alternated on one server; pairs are per round',
          connections,
          amount,
          rounds,
          minimal: medians(figures.minimal),
          base: medians(figures.base),
          variant: medians(figures.variant),
          baseOverMinimalPostgres: pairs(figures.base, figures.minimal),
          ...(variant && { variantOverBasePostgres: variantOverBase, variantOverBasePostgresMedian: round(median(variantOverBase), 3) }),
          ...(withStatements && { statementsMsPerCreate: statements }),
          perRound: figures,
          load: loadavg(),
          postgres: db.describe,
          node: process.version,
        },
        null,
        2,
      ),
    );
  } finally {
    await db.drop();
  }
}
