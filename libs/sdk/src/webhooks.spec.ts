import { signWebhook, verifyWebhook, WebhookVerificationError, type VerifyWebhookInput } from './webhooks';

// The published Standard Webhooks test vector.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const AT_VECTOR_TIME = VECTOR.timestamp * 1000;

function input(overrides: Partial<VerifyWebhookInput> = {}, headers: Record<string, string> = {}): VerifyWebhookInput {
  return {
    payload: VECTOR.payload,
    secret: VECTOR.secret,
    now: AT_VECTOR_TIME,
    headers: {
      'webhook-id': VECTOR.id,
      'webhook-timestamp': String(VECTOR.timestamp),
      'webhook-signature': VECTOR.signature,
      ...headers,
    },
    ...overrides,
  };
}

function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
  throw new Error('verification passed');
}

describe('verifyWebhook (Standard Webhooks)', () => {
  it('reproduces the published signature', () => {
    expect(signWebhook({ id: VECTOR.id, timestamp: VECTOR.timestamp, payload: VECTOR.payload, secret: VECTOR.secret })).toBe(
      VECTOR.signature,
    );
    // Without the whsec_ prefix a secret is its UTF-8 bytes, as the broker's signer keys it.
    const raw = signWebhook({ id: VECTOR.id, timestamp: VECTOR.timestamp, payload: VECTOR.payload, secret: 'plain-text-secret' });
    const utf8 = signWebhook({
      id: VECTOR.id,
      timestamp: VECTOR.timestamp,
      payload: VECTOR.payload,
      secret: Buffer.from('plain-text-secret'),
    });
    expect(raw).toBe(utf8);
  });

  it('accepts the vector and gives the id, the time and the parsed body', () => {
    const verified = verifyWebhook(input());
    expect(verified).toEqual({ id: VECTOR.id, timestamp: new Date(AT_VECTOR_TIME), body: { test: 2432232314 } });
  });

  it('accepts fetch Headers, Buffers and mixed-case header names', () => {
    const headers = new Headers({
      'Webhook-Id': VECTOR.id,
      'Webhook-Timestamp': String(VECTOR.timestamp),
      'Webhook-Signature': VECTOR.signature,
    });
    expect(verifyWebhook(input({ headers, payload: Buffer.from(VECTOR.payload) })).id).toBe(VECTOR.id);
    const record = { 'Webhook-Id': VECTOR.id, 'Webhook-Timestamp': String(VECTOR.timestamp), 'Webhook-Signature': VECTOR.signature };
    expect(verifyWebhook(input({ headers: record })).id).toBe(VECTOR.id);
  });

  it('accepts any of several signatures and any of several secrets (rotation)', () => {
    expect(verifyWebhook(input({}, { 'webhook-signature': `v1,bm9wZQ== v2,abc ${VECTOR.signature}` })).id).toBe(VECTOR.id);
    expect(verifyWebhook(input({ secret: ['whsec_bm90IHRoZSBrZXk=', VECTOR.secret] })).id).toBe(VECTOR.id);
  });

  it('refuses a changed body, a wrong secret, a wrong id and a missing header', () => {
    expect(failure(() => verifyWebhook(input({ payload: '{"test": 2432232315}' })))).toBe('no_matching_signature');
    expect(failure(() => verifyWebhook(input({ secret: 'whsec_bm90IHRoZSBrZXk=' })))).toBe('no_matching_signature');
    expect(failure(() => verifyWebhook(input({}, { 'webhook-id': 'msg_other' })))).toBe('no_matching_signature');
    expect(failure(() => verifyWebhook(input({}, { 'webhook-signature': 'v1,' })))).toBe('no_matching_signature');
    expect(failure(() => verifyWebhook(input({ headers: { 'webhook-id': VECTOR.id, 'webhook-timestamp': '1614265330' } })))).toBe(
      'missing_headers',
    );
  });

  it('refuses a timestamp outside the tolerance, either way, and one that is not a number', () => {
    expect(failure(() => verifyWebhook(input({ now: AT_VECTOR_TIME + 301_000 })))).toBe('timestamp_too_old');
    expect(failure(() => verifyWebhook(input({ now: AT_VECTOR_TIME - 301_000 })))).toBe('timestamp_too_new');
    expect(verifyWebhook(input({ now: AT_VECTOR_TIME + 300_000 })).id).toBe(VECTOR.id);
    expect(verifyWebhook(input({ now: AT_VECTOR_TIME + 3_600_000, toleranceSeconds: 3_600 })).id).toBe(VECTOR.id);
    expect(failure(() => verifyWebhook(input({}, { 'webhook-timestamp': '1614265330.5' })))).toBe('invalid_timestamp');
  });

  it('refuses a correctly signed body that is not JSON', () => {
    const payload = 'not json';
    const signature = signWebhook({ id: VECTOR.id, timestamp: VECTOR.timestamp, payload, secret: VECTOR.secret });
    expect(failure(() => verifyWebhook(input({ payload }, { 'webhook-signature': signature })))).toBe('invalid_body');
  });

  it('signs with a raw key given as bytes', () => {
    const key = new Uint8Array([1, 2, 3, 4]);
    const signature = signWebhook({ id: 'msg_1', timestamp: new Date(AT_VECTOR_TIME), payload: '{}', secret: key });
    const verified = verifyWebhook(input({ payload: '{}', secret: key }, { 'webhook-id': 'msg_1', 'webhook-signature': signature }));
    expect(verified.body).toEqual({});
  });
});
