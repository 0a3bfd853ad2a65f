import { DataSource } from 'typeorm';
import { brokerDataSourceOptions } from '@app/database';
import { createTestDatabase, type TestDatabase, ManualClock } from '@app/testing';
import { ENTITIES } from '../database/entities';
import { WebhookSecrets } from './secrets/webhook-secrets';
import { WebhookVerificationError, newWebhookSecret, signWebhook, signatureFor, verifyWebhook } from './signature';

describe('Standard Webhooks signatures', () => {
  const now = Date.UTC(2026, 6, 15, 12, 0, 0);
  const ts = Math.floor(now / 1000);
  const body = JSON.stringify({ id: 'evt_1', type: 'session.created', timestamp: new Date(now).toISOString(), data: { a: 1 } });

  it('matches the Standard Webhooks reference vector', () => {
    expect(signatureFor('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('verifies what it signs and returns the parsed body', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const headers = signWebhook([secret], 'dlv_1', ts, body);
    expect(verifyWebhook(secret, headers, body, { now })).toMatchObject({ id: 'evt_1', type: 'session.created', data: { a: 1 } });
    expect(verifyWebhook(secret, headers, Buffer.from(body), { now }).id).toBe('evt_1');
  });

  it('reads headers from a fetch Headers object, whatever their case', () => {
    const secret = newWebhookSecret();
    const signed = signWebhook([secret], 'dlv_1', ts, body);
    expect(verifyWebhook(secret, new Headers(signed), body, { now }).id).toBe('evt_1');
    const upper = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toUpperCase(), v]));
    expect(verifyWebhook(secret, upper, body, { now }).id).toBe('evt_1');
  });

  it.each([
    ['a changed body', (h: Record<string, string>) => ({ headers: h, body: body.replace('"a":1', '"a":2') })],
    ['another webhook-id', (h: Record<string, string>) => ({ headers: { ...h, 'webhook-id': 'dlv_2' }, body })],
    ['a changed timestamp', (h: Record<string, string>) => ({ headers: { ...h, 'webhook-timestamp': String(ts + 1) }, body })],
    ['no signature', (h: Record<string, string>) => ({ headers: { ...h, 'webhook-signature': '' }, body })],
    [
      'a v2 signature only',
      (h: Record<string, string>) => ({ headers: { ...h, 'webhook-signature': h['webhook-signature'].replace('v1,', 'v2,') }, body }),
    ],
  ])('refuses %s', (_what, tamper) => {
    const secret = newWebhookSecret();
    const { headers, body: received } = tamper(signWebhook([secret], 'dlv_1', ts, body));
    expect(() => verifyWebhook(secret, headers, received, { now })).toThrow(WebhookVerificationError);
  });

  it('refuses another secret and a timestamp outside the tolerance (replay)', () => {
    const secret = newWebhookSecret();
    const headers = signWebhook([secret], 'dlv_1', ts, body);
    expect(() => verifyWebhook(newWebhookSecret(), headers, body, { now })).toThrow('no webhook-signature matches');
    expect(() => verifyWebhook(secret, headers, body, { now: now + 301_000 })).toThrow('outside the tolerance');
    expect(() => verifyWebhook(secret, headers, body, { now: now - 301_000 })).toThrow('outside the tolerance');
    expect(verifyWebhook(secret, headers, body, { now: now + 600_000, toleranceSec: 900 }).id).toBe('evt_1');
  });

  it('verifies a message signed by two secrets with either one', () => {
    const previous = newWebhookSecret();
    const current = newWebhookSecret();
    const headers = signWebhook([current, previous], 'dlv_1', ts, body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyWebhook(previous, headers, body, { now }).id).toBe('evt_1');
    expect(verifyWebhook(current, headers, body, { now }).id).toBe('evt_1');
    expect(verifyWebhook([current, previous], headers, body, { now }).id).toBe('evt_1');
    expect(() => verifyWebhook(newWebhookSecret(), headers, body, { now })).toThrow(WebhookVerificationError);
  });

  describe('through a rotation, signed with the secrets the broker keeps (WebhookSecrets, a manual clock)', () => {
    const OVERLAP_MS = 24 * 3_600_000;
    let db: TestDatabase;
    let dataSource: DataSource;

    beforeAll(async () => {
      db = await createTestDatabase();
      dataSource = await new DataSource(brokerDataSourceOptions({ url: db.url, entities: ENTITIES, poolSize: 1 })).initialize();
    });
    afterAll(async () => {
      await dataSource?.destroy();
      await db?.drop();
    });

    it('both secrets sign for the overlap, then only the new one: the old secret no longer verifies', async () => {
      const clock = new ManualClock(now);
      const secrets = new WebhookSecrets(dataSource, OVERLAP_MS, clock);
      const [{ id: accountId }] = (await dataSource.query(`INSERT INTO accounts (name) VALUES ('rotation') RETURNING id`)) as Array<{
        id: string;
      }>;
      const previous = (await secrets.reveal(accountId))!.secret;
      const current = (await secrets.rotate(accountId)).secret;
      const signedAt = async (at: number) => {
        clock.set(at);
        return signWebhook(await secrets.signingSecrets(accountId), `dlv_${at}`, Math.floor(at / 1000), body);
      };

      for (const at of [now, now + OVERLAP_MS - 1]) {
        const headers = await signedAt(at);
        expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
        expect(verifyWebhook(previous, headers, body, { now: at }).id).toBe('evt_1');
        expect(verifyWebhook(current, headers, body, { now: at }).id).toBe('evt_1');
      }
      const after = await signedAt(now + OVERLAP_MS);
      expect(after['webhook-signature'].split(' ')).toHaveLength(1);
      expect(verifyWebhook(current, after, body, { now: now + OVERLAP_MS }).id).toBe('evt_1');
      expect(() => verifyWebhook(previous, after, body, { now: now + OVERLAP_MS })).toThrow(WebhookVerificationError);
    });
  });
});
