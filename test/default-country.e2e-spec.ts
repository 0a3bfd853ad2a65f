/**
 * Numbers as Nigerians write them (issue #30): an account sets its default country, and from then on
 * `08031234567` is read as +2348031234567 wherever a participant number is taken; answers are E.164.
 * Without it (and for every other account), the E.164 rule stands.
 */
import request from 'supertest';
import { BrokerClient } from '@session-broker/sdk';
import { API_KEY, AUTH_ENV, OTHER_API_KEY, createSession } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';

describe('PUT /v1/account/default-country', () => {
  let broker: BrokerHarness;
  const put = (country: unknown, key = API_KEY) =>
    request(broker.url).put('/v1/account/default-country').set('authorization', `Bearer ${key}`).send({ country });
  const national = (a: string, b: string) => ({ channel: 'voice', participants: [{ number: a }, { number: b }] });

  beforeAll(async () => {
    broker = await startBroker({ ...AUTH_ENV, SIM_SEED_NUMBERS: '5' });
  }, 120_000);
  afterAll(() => broker?.close());

  it('starts unset: a national number is a 400 naming the participant and saying how to allow it', async () => {
    expect(
      (await request(broker.url).get('/v1/account/default-country').set('authorization', `Bearer ${API_KEY}`).expect(200)).body,
    ).toEqual({
      country: null,
    });
    const res = await createSession(broker.url, national('08031110001', '+2348031110002')).expect(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(res.body.errors).toEqual([{ field: 'participants[0].number', message: expect.stringContaining('default country') }]);
  });

  it('with NG, national numbers are read as Nigerian and every answer is E.164', async () => {
    expect((await put('NG').expect(200)).body).toEqual({ country: 'NG' });
    const created = await createSession(broker.url, national('08031110001', '0803 111 0002')).expect(201);
    expect(created.body.participants).toEqual([{ number: '+2348031110001' }, { number: '+2348031110002' }]);
    const read = await request(broker.url).get(`/v1/sessions/${created.body.id}`).set('authorization', `Bearer ${API_KEY}`).expect(200);
    expect(read.body.participants).toEqual([{ number: '+2348031110001' }, { number: '+2348031110002' }]);
    // E.164 keeps working; one person written two ways is still one person.
    await createSession(broker.url, national('+2348031110003', '08031110004')).expect(201);
    const same = await createSession(broker.url, national('08031110005', '+2348031110005')).expect(400);
    expect(same.body.errors).toEqual([{ field: 'participants', message: 'participants must be two different numbers' }]);
    // Not a Nigerian number at all: 400, nothing created.
    await createSession(broker.url, national('0803', '08031110006')).expect(400);
  });

  it('is per account: another account still needs E.164', async () => {
    await createSession(broker.url, national('08031110007', '08031110008'), OTHER_API_KEY).expect(400);
  });

  it('refuses what is not a country, and null clears it', async () => {
    for (const bad of ['ng', 'NGA', 'XX', 7, ''])
      expect((await put(bad).expect(400)).body.errors).toEqual([{ field: 'country', message: expect.stringContaining('ISO 3166') }]);
    expect(
      (await request(broker.url).put('/v1/account/default-country').set('authorization', `Bearer ${API_KEY}`).send({}).expect(400)).body
        .errors[0].field,
    ).toBe('country');
    await request(broker.url).put('/v1/account/default-country').send({ country: 'NG' }).expect(401);
    expect((await put(null).expect(200)).body).toEqual({ country: null });
    await createSession(broker.url, national('08031110009', '08031110010')).expect(400);
  });

  it('the SDK sets and reads it, and creates with national numbers', async () => {
    const client = new BrokerClient({ baseUrl: broker.url, apiKey: OTHER_API_KEY });
    expect(await client.setDefaultCountry('NG')).toEqual({ country: 'NG' });
    expect(await client.getDefaultCountry()).toEqual({ country: 'NG' });
    const session = await client.createSession({ channel: 'voice', participants: [{ number: '08031110011' }, { number: '08031110012' }] });
    expect(session.participants).toEqual([{ number: '+2348031110011' }, { number: '+2348031110012' }]);
  });
});
