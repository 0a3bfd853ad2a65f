/**
 * The advisory-lock gate on a real PostgreSQL: two replicas (two connection pools) run the same job, and
 * while one is in a pass the other's passes do not run; once it has ended, either may take the next.
 */
import { DataSource } from 'typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { AdvisoryLocks, JOB_LOCKS } from '../database/exclusive';
import { JobRunner } from './job-runner';

describe('JobRunner.exclusive', () => {
  let db: TestDatabase;
  let replicas: DataSource[];

  beforeAll(async () => {
    db = await createTestDatabase();
    replicas = await Promise.all(
      [1, 2].map(() => new DataSource(brokerDataSourceOptions({ url: db.url, entities: [], poolSize: 2 })).initialize()),
    );
  });
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.destroy()));
    await db.drop();
  });

  it('runs a pass on one replica at a time', async () => {
    const ran: string[] = [];
    let endFirst!: () => void;
    const [a, b] = replicas.map((dataSource, i) =>
      new JobRunner(new AdvisoryLocks(dataSource)).exclusive(JOB_LOCKS.relayRetries, {
        name: `replica-${i}`,
        intervalMs: 60_000,
        work: () => {
          ran.push(`replica-${i}`);
          return i === 0 ? new Promise<void>((done) => (endFirst = done)) : Promise.resolve();
        },
      }),
    );

    const first = a.runOnce();
    // Replica 0 holds the lock once its work has started.
    while (ran.length === 0) await new Promise((done) => setImmediate(done));
    await b.runOnce();
    expect(ran).toEqual(['replica-0']);

    endFirst();
    await first;
    await b.runOnce();
    expect(ran).toEqual(['replica-0', 'replica-1']);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('runs the jobs due together on one replica one at a time, so a pool of 3 never waits on itself', async () => {
    const small = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: [], poolSize: 3 })).initialize();
    try {
      const runner = new JobRunner(new AdvisoryLocks(small));
      let running = 0;
      let most = 0;
      const jobs = Object.values(JOB_LOCKS).map((key) =>
        runner.exclusive(key, {
          name: `job-${key}`,
          intervalMs: 60_000,
          // Each pass's work takes a connection of its own besides its lock's, as the real jobs do.
          work: async () => {
            most = Math.max(most, ++running);
            await small.query('SELECT pg_sleep(0.05)');
            running -= 1;
          },
        }),
      );
      expect(jobs.length).toBeGreaterThan(3);
      // Without the replica's one-at-a-time rule, five locks hold all three connections and every pass's
      // statement waits for the connect timeout (then fails).
      await Promise.all(jobs.map((job) => job.runOnce()));
      expect(most).toBe(1);
      await Promise.all(jobs.map((job) => job.stop()));
    } finally {
      await small.destroy();
    }
  });
});
