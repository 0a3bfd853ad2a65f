/**
 * Webhook secret rotation through the running broker: a rotation keeps the previous secret signing for
 * the overlap, and a second rotation within it cuts the oldest at once, so a delivery then carries the
 * two newest signatures and nothing the oldest secret can verify. Events come from a real relay.
 */
import request from 'supertest';
import { verifyWebhook } from '../apps/broker/src/notifications';
import { WebhookReceiver, type ReceivedWebhook } from '@app/testing';
import { API_KEY, AUTH_ENV, createSession, freshPair, sessionBody } from './support/api-client';
import { startBroker, type BrokerHarness } from './support/broker-harness';
import { eventually } from './support/processes';
import { simInbound } from './support/sim-control';

describe('a second webhook secret rotation', () => {
  let broker: BrokerHarness;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    broker = await startBroker({
      ...AUTH_ENV,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_POLL_INTERVAL_MS: '50',
      RELAY_RETRY_INTERVAL_MS: '3600000',
      SESSION_SWEEP_INTERVAL_MS: '3600000',
    });
  });
  afterAll(async () => {
    await broker?.close();
    await receiver?.close();
  });

  const api = () => ({
    put: (path: string) => request(broker.url).put(path).set('authorization', `Bearer ${API_KEY}`),
    post: (path: string) => request(broker.url).post(path).set('authorization', `Bearer ${API_KEY}`),
  });

  /** Relays one SMS through a fresh session and answers the webhook the receiver got for it. */
  async function relayedDelivery(): Promise<ReceivedWebhook> {
    const [a, b] = freshPair();
    const session = (await createSession(broker.url, sessionBody([a, b])).expect(201)).body;
    await simInbound(broker.sim.url, session.provider, { channel: 'sms', from: a, to: session.proxyNumber, text: 'hi' });
    const mine = () => receiver.received.find((r) => r.body.includes(session.id) && r.body.includes('"message.relayed"'));
    await eventually(async () => mine() !== undefined);
    return mine()!;
  }

  it('cuts the oldest secret at once: the next delivery is signed by the two newest only', async () => {
    const first = (await api().put('/v1/account/callback-url').send({ callbackUrl: receiver.url }).expect(200)).body
      .webhookSecret as string;
    const second = (await api().post('/v1/account/webhook-secret/rotate').expect(200)).body.secret as string;
    const afterOne = await relayedDelivery();
    expect(String(afterOne.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => verifyWebhook(first, afterOne.headers, afterOne.body)).not.toThrow();

    const third = (await api().post('/v1/account/webhook-secret/rotate').expect(200)).body.secret as string;
    const afterTwo = await relayedDelivery();
    expect(String(afterTwo.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => verifyWebhook(third, afterTwo.headers, afterTwo.body)).not.toThrow();
    expect(() => verifyWebhook(second, afterTwo.headers, afterTwo.body)).not.toThrow();
    expect(() => verifyWebhook(first, afterTwo.headers, afterTwo.body)).toThrow();
  });
});
