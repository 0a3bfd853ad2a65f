/**
 * `npm run drill:database-failover` in the suite (issue #32, docs/operations.md#past-one-database-server):
 * two built brokers on a Patroni cluster behind HAProxy (deploy/ha: two PostgreSQL 15 nodes in
 * synchronous_mode, one etcd), under steady creates, relays and webhooks. The leader's postmaster is
 * killed with kill -9, then, once the old leader is back as the sync standby, the new leader's whole node.
 * What a user would notice: no create answered 201 is lost, creates resume on the promoted node without a
 * broker restart, readiness goes 503 and comes back, and every LISTEN path works again. The result is
 * kept in reports/database-failover.json; its figures (seconds) are reported, never asserted.
 *
 * Needs Debian's patroni, etcd-server, haproxy and postgresql-15 (.ci/run installs them; as root with
 * apt-get this test does too).
 */
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { databaseFailoverDrill, type FailoverDrillResult } from './drills/database-failover';
import { missingHaPackages } from './drills/ha-cluster';
import { buildOnce } from './support/processes';

function ensureHaPackages(): void {
  const missing = missingHaPackages();
  if (!missing) return;
  const root = process.getuid?.() === 0;
  const apt = spawnSync('sh', ['-c', 'command -v apt-get']).status === 0;
  if (!root || !apt) throw new Error(`the database failover drill needs Debian's ${missing} (apt-get install -y ${missing})`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...missing.split(' ')]]) {
    const result = spawnSync('apt-get', args, { env, encoding: 'utf8', timeout: 900_000 });
    if (result.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed: ${result.stderr}`);
  }
}

describe('the database leader lost under load (Patroni + etcd + HAProxy)', () => {
  let result: FailoverDrillResult;

  beforeAll(async () => {
    ensureHaPackages();
    buildOnce();
    result = await databaseFailoverDrill();
    await mkdir('reports', { recursive: true });
    await writeFile('reports/database-failover.json', `${JSON.stringify(result, null, 2)}\n`);
  }, 1_200_000);

  it('passes every check of the drill', () => {
    expect(result.failures).toEqual([]);
    expect(result.ok).toBe(true);
  });

  it('loses no create answered 201, on the promoted leader or on its sync standby, in either round', () => {
    expect(result.rounds.map((r) => r.kind)).toEqual(['postmaster', 'node']);
    expect(result.acknowledgedLost).toBe(0);
    expect(result.acknowledgedLostOnStandby).toBe(0);
    expect(result.creates.answered201).toBeGreaterThan(200);
    expect(result.durability).toMatchObject({ synchronousCommit: 'on' });
    expect(result.durability.synchronousStandbyNames).not.toBe('');
    expect(result.poolRule).toMatchObject({ violations: 0, unguarded: 0, clientSideClashes: 0 });
  });

  it('fails over to the other node each time; creates resume and readiness comes back, with no broker restarted', () => {
    for (const round of result.rounds) {
      expect(round.promoted).not.toBeNull();
      expect(round.promoted).not.toBe(round.killed);
      expect(round.createsAfterFailover).toBeGreaterThan(0);
      expect(round.readiness).toEqual({ wentDown: true, cameBack: true });
      expect(round.rejoinedSeconds).not.toBeNull();
    }
    expect(result.brokersRestarted).toBe(0);
    // While there was no leader a create got a problem+json it may retry: no 500, no unanswered request.
    expect(result.serverErrors).toEqual({});
    expect(result.creates.overBound).toBe(0);
  });

  it('brings every LISTEN path back on the new leader: breaker state, destinations, Idempotency-Key waiters, webhook wakes', () => {
    for (const round of result.rounds)
      expect(round.listenPaths).toMatchObject({
        breakerTripReachedOtherBroker: true,
        breakerClosedAgainOnBoth: true,
        destinationChangeReachedOtherBroker: true,
        idempotencyWaiterGotSameSession: true,
        webhookWokenWithoutPoll: true,
      });
    expect(result.breakerLeader).toEqual({ leases: 1, bothBrokersNameIt: true });
    for (const series of result.metrics) {
      expect(series.broker_db_listen_connected).toBe(1);
      expect(series.broker_db_listen_reconnects_total).toBeGreaterThanOrEqual(2);
    }
  });

  it('delivers every session.created and relays every accepted text', () => {
    expect(result.webhooks.notDelivered).toBe(0);
    expect(result.relays.accepted).toBeGreaterThan(0);
    expect(result.relays.notRelayed).toBe(0);
  });
});
