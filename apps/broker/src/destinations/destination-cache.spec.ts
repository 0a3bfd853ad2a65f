/**
 * The destination check's memory on a real PostgreSQL, two replicas (A and B: a connection and a
 * LISTEN client each) over one database: a change made through A (numbers added or removed, an
 * account's countries widened) reaches B's memory through the triggers' NOTIFY; a refusal re-reads
 * first, so a widening is honoured at once even where the notification is lost; and where it is
 * lost, the periodic refresh brings a narrowing in at exactly its interval (virtual time).
 */
import { DataSource } from 'typeorm';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase } from '@app/testing';
import { eventually } from '../../../../test/support/processes';
import { ListenClient, type ChannelListener } from '../database/listen-client';
import { ProblemException } from '../common/problem';
import { DestinationCache, type DestinationCacheOptions } from './destination-cache';
import { DestinationPolicy } from './destination-policy';
import { DestinationRepository } from './destination.repository';

const NG_POOL = '+2348030009990';
const GB_POOL = '+447400999000';
const GB_PERSON = '+447400123456';
const FR_PERSON = '+33612345678';
const NG_PERSON = '+2348030000011';

/** A replica whose notifications are all lost (its LISTEN connection's session gone). */
const deaf: ChannelListener = { subscribe: () => () => undefined, onReconnect: () => () => undefined };

describe('DestinationCache across replicas', () => {
  let db: TestDatabase;
  let a: DataSource;
  let b: DataSource;
  const stops: Array<() => Promise<void> | void> = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    a = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: [], poolSize: 2 })).initialize();
    b = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: [], poolSize: 2 })).initialize();
    await a.query(`INSERT INTO proxy_numbers (provider, number) VALUES ('sim', $1)`, [NG_POOL]);
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
    await a.query('DELETE FROM proxy_numbers WHERE number <> $1', [NG_POOL]);
  });
  afterAll(async () => {
    await a?.destroy();
    await b?.destroy();
    await db?.drop();
  });

  const account = async (allowed: string[] | null): Promise<string> =>
    (
      (await a.query(`INSERT INTO accounts (name, allowed_countries) VALUES ('spec', $1) RETURNING id`, [allowed])) as Array<{ id: string }>
    )[0].id;

  async function replica(dataSource: DataSource, listener: ChannelListener | 'listen', options: DestinationCacheOptions = {}) {
    let channel = listener;
    if (channel === 'listen') {
      const client = new ListenClient(db.url, { applicationName: 'destination-cache-spec' });
      await client.start();
      stops.push(() => client.stop());
      channel = client;
    }
    const cache = new DestinationCache(new DestinationRepository(dataSource), channel, { refreshMs: 0, ...options });
    await cache.start();
    stops.push(() => cache.stop());
    const policy = new DestinationPolicy(cache);
    /** 'ok', or the refusal's slug and country. */
    const check = async (participant: string): Promise<string> => {
      try {
        await policy.assertAllowed(accountId, 'voice', [NG_PERSON, participant]);
        return 'ok';
      } catch (error) {
        const problem = error as ProblemException;
        return `${problem.slug} ${(problem.extensions.country as string | undefined) ?? ''}`.trim();
      }
    };
    return { cache, check };
  }
  let accountId: string;

  it('hears numbers added and removed, and countries widened, through A on B', async () => {
    accountId = await account(null);
    const replicaA = await replica(a, 'listen');
    const replicaB = await replica(b, 'listen');
    const inMemoryOnB = async () => (await replicaB.cache.view(accountId))!;
    expect(await replicaB.check(GB_PERSON)).toBe('destination-not-allowed GB');

    await a.query(`INSERT INTO proxy_numbers (provider, number) VALUES ('sim', $1)`, [GB_POOL]);
    await eventually(async () => (await inMemoryOnB()).poolCountries.has('GB'), 100, 20);
    expect(await replicaB.check(GB_PERSON)).toBe('ok');
    expect(await replicaB.check(GB_POOL)).toBe('proxy-number-participant');
    // A, where the change was made, heard it too (its notification arrives on its own connection, maybe after B's).
    await eventually(async () => (await replicaA.cache.view(accountId))!.poolNumbers.has(GB_POOL), 100, 20);

    await a.query('DELETE FROM proxy_numbers WHERE number = $1', [GB_POOL]);
    await eventually(async () => !(await inMemoryOnB()).poolCountries.has('GB'), 100, 20);
    expect(await replicaB.check(GB_PERSON)).toBe('destination-not-allowed GB');
    expect(await replicaB.check(GB_POOL)).toBe('destination-not-allowed GB');

    await a.query(`UPDATE accounts SET allowed_countries = '{NG,FR}' WHERE id = $1`, [accountId]);
    await eventually(async () => (await inMemoryOnB()).account.allowedCountries?.includes('FR') === true, 100, 20);
    expect(await replicaB.check(FR_PERSON)).toBe('ok');
    expect(await replicaB.check(GB_PERSON)).toBe('destination-not-allowed GB');
  });

  it('re-reads before refusing: a widening is honoured at once on a replica that heard nothing', async () => {
    accountId = await account(['NG']);
    const replicaB = await replica(b, deaf);
    expect(await replicaB.check(FR_PERSON)).toBe('destination-not-allowed FR');
    await a.query(`UPDATE accounts SET allowed_countries = '{NG,FR}' WHERE id = $1`, [accountId]);
    expect(await replicaB.check(FR_PERSON)).toBe('ok');
    await a.query(`INSERT INTO proxy_numbers (provider, number) VALUES ('sim', $1)`, [GB_POOL]);
    // A new pool number is refused as a participant once a refusal made B re-read (GB is not allowed here).
    expect(await replicaB.check(GB_POOL)).toBe('proxy-number-participant');
  });

  it('without notifications, a narrowing reaches B at the refresh interval, not one millisecond before', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    const advanceTo = async (at: number) => {
      scheduler.maxFrames = at;
      scheduler.flush();
      scheduler.frame = Math.max(scheduler.frame, at);
    };
    accountId = await account(['NG', 'GB']);
    await a.query(`INSERT INTO proxy_numbers (provider, number) VALUES ('sim', $1)`, [GB_POOL]);
    const replicaB = await replica(b, deaf, { refreshMs: 30_000, scheduler });
    expect(await replicaB.check(GB_PERSON)).toBe('ok');

    await a.query(`UPDATE accounts SET allowed_countries = '{NG}' WHERE id = $1`, [accountId]);
    await a.query('DELETE FROM proxy_numbers WHERE number = $1', [GB_POOL]);
    await advanceTo(29_999);
    await replicaB.cache.settled();
    const before = (await replicaB.cache.view(accountId))!;
    expect(before.account.allowedCountries).toEqual(['NG', 'GB']);
    expect(before.poolNumbers.has(GB_POOL)).toBe(true);

    await advanceTo(30_000);
    await replicaB.cache.settled();
    const after = (await replicaB.cache.view(accountId))!;
    expect(after.account.allowedCountries).toEqual(['NG']);
    expect(after.poolNumbers.has(GB_POOL)).toBe(false);
    expect(await replicaB.check(GB_PERSON)).toBe('destination-not-allowed GB');
  });
});
