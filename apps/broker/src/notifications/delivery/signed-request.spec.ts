import twilio from 'twilio';
import { TWILIO_CALLBACK_EVENT_TYPE } from '../events/event-outbox';
import type { WebhookSecrets } from '../../accounts/webhook-secrets/webhook-secrets';
import type { ClaimedDelivery } from './delivery-store';
import { SignedRequestPreparer, webhookBody, webhookBodyBytes } from './signed-request';

const SECRET = 'whsec_c3VwZXItc2VjcmV0LWZvci10aGUtc3BlYw';
const secrets = { signingSecrets: () => Promise.resolve([SECRET, 'whsec_b2xkLXNlY3JldA']) } as unknown as WebhookSecrets;
const preparer = new SignedRequestPreparer(secrets, undefined);

function delivery(type: string, data: Record<string, unknown>): ClaimedDelivery {
  return {
    id: '2b1f6a0e-3c4d-4e5f-8a9b-0c1d2e3f4a5b',
    accountId: '00000000-0000-0000-0000-0000000000a1',
    kind: 'account',
    attempts: 0,
    expiresAt: Date.now() + 60_000,
    eventId: '9d8c7b6a-5f4e-4d3c-8b2a-190807060504',
    type,
    eventCreatedAt: new Date('2030-07-30T20:00:00Z'),
    data,
  };
}

describe('the request a delivery is sent as', () => {
  const url = 'https://app.example.com/proxy/callback?service=rides';
  const params = { interactionSid: 'KI' + 'a'.repeat(32), interactionType: 'Message', interactionData: '{"body":"at the gate"}' };

  it('is Twilio’s for a Twilio-format callback: its form parameters, signed over the full URL with the current secret', async () => {
    const { body, headers } = await preparer.prepare(
      delivery(TWILIO_CALLBACK_EVENT_TYPE, { url, params, receivedAt: '2030-07-30T20:00:00.000Z' }),
      Date.now(),
    );
    expect(headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(headers['i-twilio-idempotency-token']).toBe('2b1f6a0e-3c4d-4e5f-8a9b-0c1d2e3f4a5b');
    // What the broker adds to every event's data is not sent: the parameters are Twilio's alone.
    expect(Object.fromEntries(new URLSearchParams(body))).toEqual(params);
    expect(twilio.validateRequest(SECRET, headers['x-twilio-signature'], url, params)).toBe(true);
    expect(twilio.validateRequest('whsec_b2xkLXNlY3JldA', headers['x-twilio-signature'], url, params)).toBe(false);
    expect(twilio.validateRequest(SECRET, headers['x-twilio-signature'], 'https://app.example.com/proxy/callback', params)).toBe(false);
    expect(headers['webhook-signature']).toBeUndefined();
  });

  it('stays the broker’s signed JSON for every other event', async () => {
    const { body, headers } = await preparer.prepare(delivery('message.relayed', { sessionId: 's' }), Date.now());
    expect(JSON.parse(body)).toMatchObject({ type: 'message.relayed', data: { sessionId: 's' } });
    expect(headers['webhook-signature']).toMatch(/^v1,/);
    expect(headers['x-twilio-signature']).toBeUndefined();
  });
});

describe('webhookBodyBytes', () => {
  it.each([
    ['no data', {}],
    ['a session event', { session: { id: 'x', numberHistory: [{ since: '2030-07-30T20:00:00.000Z', until: null }] }, receivedAt: 'now' }],
    ['text with quotes, escapes and characters of 2, 3 and 4 bytes', { text: 'a "b" \\ \n \u0007 é € 𝄞', list: [1, 2.5, -0, true, null] }],
    ['a key that needs escaping', { 'k"\\ey': 'v' }],
  ])('is the byte length of the body itself: %s', (_case, data: Record<string, unknown>) => {
    const event = delivery('session.created', data);
    expect(webhookBodyBytes(event, JSON.stringify(data))).toBe(Buffer.byteLength(webhookBody(event)));
  });
});
