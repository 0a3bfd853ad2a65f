/**
 * The broker's CPU per session create, this build against another one (`--against=DIR`: the root of a
 * checkout with its own `dist/` built and `node_modules`, say main before a change), in the
 * same run: both brokers on the same PostgreSQL and simulator, each warmed with `warm` creates, then
 * `rounds` rounds of `amount` creates at `connections` connections on each, the order alternating,
 * session tables emptied before every phase. CPU is /proc's utime + stime of each broker process over
 * its own phases, divided by its 201s: on a machine shared with other benchmarks this is the figure to
 * compare, not latency. The simulator's CPU per create does the same work for both and shows the noise.
 * PostgreSQL's CPU per create (postmaster, backends and workers, `postgresCpu`) is measured over each
 * build's phases too: both builds share the database, so a schema change applies to both (compare those
 * by alternating whole runs instead), but a change to the statements a build sends shows here.
 */
import { join } from 'node:path';
import { load } from '../support/load';
import { processCpuMs } from '../support/cpu';
import { startBrokerProcess, type BrokerProcess } from '../support/stack';
import { startDirectBroker, type DirectBroker } from './direct-provider';
import { round } from '../support/stats';

export interface AgainstOptions {
  databaseUrl: string;
  simUrl: string;
  simPid: number;
  env: Record<string, string>;
  against: string;
  headers: Record<string, string>;
  body: () => string;
  /** Headers per request (`--idempotency-key`: a fresh Idempotency-Key on every create, as the SDK sends). */
  requestHeaders?: () => Record<string, string>;
  warm: number;
  rounds: number;
  amount: number;
  connections: number;
  reset: () => Promise<void>;
  /** PostgreSQL's CPU ms so far (postgresCpuMs of the postmaster). */
  postgresCpu: () => number;
  /** Node flags for both brokers (`--profile`: a V8 CPU profile each, written when it stops). */
  nodeArgs?: string[];
  /**
   * `--no-provider-call`: both brokers on a provider that keeps no sessions (`direct-provider.ts`), so a create is one
   * statement and no vendor request; this many pool numbers, added once. The simulator's figure then shows no work.
   */
  noProviderCall?: { numbers: number };
}

interface Phase {
  build: string;
  brokerMsPerCreate: number;
  simulatorMsPerCreate: number;
  postgresMsPerCreate: number;
  creates: number;
  perSecond: number;
}

export async function against(options: AgainstOptions) {
  const builds: Record<string, BrokerProcess> = {};
  const directs: DirectBroker[] = [];
  const againstMain = join(options.against, 'dist/apps/broker/src/main.js');
  try {
    if (options.noProviderCall) {
      const { numbers } = options.noProviderCall;
      directs.push(await startDirectBroker(options.databaseUrl, options.simUrl, options.env, numbers, options.nodeArgs));
      directs.push(await startDirectBroker(options.databaseUrl, options.simUrl, options.env, 0, options.nodeArgs, againstMain));
      [builds.this, builds.against] = directs.map((d) => d.broker);
    } else {
      builds.this = await startBrokerProcess(options.databaseUrl, options.simUrl, options.env, { nodeArgs: options.nodeArgs });
      builds.against = await startBrokerProcess(options.databaseUrl, options.simUrl, options.env, {
        main: againstMain,
        nodeArgs: options.nodeArgs,
      });
    }
    const phase = async (build: string, amount: number): Promise<Phase> => {
      await options.reset();
      const pid = builds[build].child.pid!;
      const [broker0, sim0, pg0] = [processCpuMs(pid), processCpuMs(options.simPid), options.postgresCpu()];
      const result = await load({
        url: builds[build].url,
        path: '/v1/sessions',
        method: 'POST',
        headers: options.headers,
        body: options.body,
        requestHeaders: options.requestHeaders,
        connections: options.connections,
        amount,
      });
      const creates = result.statuses[201] ?? 0;
      if (creates !== amount)
        throw new Error(`${build}: ${creates} of ${amount} creates answered 201 (${JSON.stringify(result.statuses)})`);
      return {
        build,
        brokerMsPerCreate: round((processCpuMs(pid) - broker0) / creates, 3),
        simulatorMsPerCreate: round((processCpuMs(options.simPid) - sim0) / creates, 3),
        postgresMsPerCreate: round((options.postgresCpu() - pg0) / creates, 3),
        creates,
        perSecond: round(result.perSecond, 0),
      };
    };
    for (const build of Object.keys(builds)) await phase(build, options.warm);
    const rounds: Phase[][] = [];
    for (let r = 0; r < options.rounds; r++) {
      const order = r % 2 === 0 ? ['against', 'this'] : ['this', 'against'];
      const phases: Phase[] = [];
      for (const build of order) phases.push(await phase(build, options.amount));
      rounds.push(phases);
    }
    const mean = (build: string, key: 'brokerMsPerCreate' | 'simulatorMsPerCreate' | 'postgresMsPerCreate') =>
      rounds.flat().reduce((sum, p) => sum + (p.build === build ? p[key] : 0), 0) / options.rounds;
    return {
      against: options.against,
      rounds,
      brokerMsPerCreate: { this: round(mean('this', 'brokerMsPerCreate'), 3), against: round(mean('against', 'brokerMsPerCreate'), 3) },
      thisOverAgainst: round(mean('this', 'brokerMsPerCreate') / mean('against', 'brokerMsPerCreate'), 3),
      // Each round's pair ran back to back: their spread is what this run can tell apart.
      thisOverAgainstPerRound: rounds.map((phases) => {
        const of = (build: string) => phases.find((p) => p.build === build)!.brokerMsPerCreate;
        return round(of('this') / of('against'), 3);
      }),
      simulatorThisOverAgainst: round(mean('this', 'simulatorMsPerCreate') / mean('against', 'simulatorMsPerCreate'), 3),
      postgresMsPerCreate: {
        this: round(mean('this', 'postgresMsPerCreate'), 3),
        against: round(mean('against', 'postgresMsPerCreate'), 3),
      },
      postgresThisOverAgainst: round(mean('this', 'postgresMsPerCreate') / mean('against', 'postgresMsPerCreate'), 3),
    };
  } finally {
    if (directs.length > 0) for (const direct of directs) await direct.stop();
    else for (const broker of Object.values(builds)) await broker.stop();
  }
}
