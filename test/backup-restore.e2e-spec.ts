/**
 * A backup restored, once, as docs/operations.md#backups says to take one: `pg_dump -Fc` of a broker's
 * database while it serves, `pg_restore` into a new database, and a broker started on the copy, which
 * answers every session, interaction, key, callback URL, webhook secret and breaker transition as before,
 * keeps the pool rule, and needs no migration. On Debian's PostgreSQL, whose pg_dump and server are one
 * version (the suite's embedded server has no pg_dump).
 */
import { jest } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { prepareDatabase } from '../apps/broker/src/prepare-database';
import { ADMIN_TOKEN, API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { setFault, simInbound } from './support/sim-control';
import { startSystemPostgres, type SystemPostgres } from './support/system-postgres';

jest.setTimeout(300_000);

function run(bin: string, args: string[]): void {
  const result = spawnSync(bin, args, { encoding: 'utf8', timeout: 120_000, cwd: tmpdir() });
  if (result.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed: ${result.stderr || result.error?.message}`);
}

describe('a backup of the database, restored', () => {
  let postgres: SystemPostgres;
  const brokers: BrokerHarness[] = [];

  const databaseUrl = (name: string) => postgres.url(name);
  const admin = (sql: string) => postgres.admin(sql);
  const auth = { authorization: `Bearer ${API_KEY}` };
  const env = { ...AUTH_ENV, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', BREAKER_HEALTH_INTERVAL_MS: '3600000' };

  beforeAll(async () => {
    postgres = await startSystemPostgres({ tools: ['pg_dump', 'pg_restore'] });
  }, 1_200_000);

  afterAll(async () => {
    for (const broker of brokers) await broker.close();
    await postgres?.stop();
  });

  it('gives back every session, interaction, key, secret and transition, and keeps the pool rule', async () => {
    const { bin, dir } = postgres;
    await admin('CREATE DATABASE broker');
    await prepareDatabase(databaseUrl('broker'));
    const before = await startBroker(env, { db: postgres.database('broker') });
    brokers.push(before);

    // What a day of traffic leaves: sessions, a relayed text, a callback URL and its secret, a breaker that opened.
    const callback = await request(before.url)
      .put('/v1/account/callback-url')
      .set(auth)
      .send({ callbackUrl: 'http://127.0.0.1:9999/hooks' })
      .expect(200);
    expect(callback.body.webhookSecret).toMatch(/^whsec_/);
    const pair = freshPair();
    const kept1 = (await createSession(before.url, sessionBody(pair)).expect(201)).body as {
      id: string;
      provider: string;
      proxyNumber: string;
    };
    const kept2 = (await createSession(before.url, sessionBody(freshPair(), { channel: 'voice' })).expect(201)).body as { id: string };
    await simInbound(before.sim.url, kept1.provider, { channel: 'sms', from: pair[0], to: kept1.proxyNumber, text: 'at the gate' });
    await setFault(before.sim.url, 'primary', { mode: 'down' });
    for (let i = 0; i < 5; i++) await createSession(before.url, sessionBody(freshPair())).expect(201);
    await setFault(before.sim.url, 'primary', { mode: 'ok' });
    const read = async (url: string) => ({
      sessions: await Promise.all(
        [kept1.id, kept2.id].map(async (id) => (await request(url).get(`/v1/sessions/${id}`).set(auth).expect(200)).body),
      ),
      interactions: (await request(url).get(`/v1/sessions/${kept1.id}/interactions`).set(auth).expect(200)).body,
      callbackUrl: (await request(url).get('/v1/account/callback-url').set(auth).expect(200)).body,
      secret: (await request(url).get('/v1/account/webhook-secret').set(auth).expect(200)).body,
      history: (await request(url).get('/v1/health/cpaas/history?provider=primary').expect(200)).body,
      accounts: (await request(url).get('/v1/admin/accounts').set('authorization', `Bearer ${ADMIN_TOKEN}`).expect(200)).body,
    });
    await eventually(async () => (await read(before.url)).history.transitions.length > 0);
    const original = await read(before.url);
    expect(original.interactions.interactions).toHaveLength(1);
    expect(original.history.transitions[0]).toMatchObject({ from: 'CLOSED', to: 'OPEN' });

    // The backup, taken while the broker serves; then a new database from it.
    const dump = join(dir, 'broker.dump');
    run(join(bin, 'pg_dump'), ['--format=custom', `--file=${dump}`, databaseUrl('broker')]);
    await admin('CREATE DATABASE broker_restored');
    run(join(bin, 'pg_restore'), ['--no-owner', '--exit-on-error', `--dbname=${databaseUrl('broker_restored')}`, dump]);

    expect(await prepareDatabase(databaseUrl('broker_restored'))).toEqual([]);
    const after = await startBroker(env, { db: postgres.database('broker_restored') });
    brokers.push(after);
    expect(await read(after.url)).toEqual(original);
    // The pool rule holds on the copy: the same two people get a second session on another proxy number.
    const again = (await createSession(after.url, sessionBody(pair)).expect(201)).body as { provider: string; proxyNumber: string };
    expect(again.provider === kept1.provider && again.proxyNumber === kept1.proxyNumber).toBe(false);
  });
});
