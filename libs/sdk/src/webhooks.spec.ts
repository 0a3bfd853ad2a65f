import {
  constructEvent,
  constructInterceptRequest,
  newWebhookSecret,
  signWebhook,
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookInput,
} from './webhooks';

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

describe('signing as the broker does (newWebhookSecret, several secrets)', () => {
  const now = Date.UTC(2026, 6, 15, 12, 0, 0);
  const body = JSON.stringify({ id: 'evt_1', type: 'session.created', timestamp: new Date(now).toISOString(), data: { a: 1 } });
  const signed = (secret: string | string[]) => ({
    'webhook-id': 'dlv_1',
    'webhook-timestamp': String(now / 1000),
    'webhook-signature': signWebhook({ id: 'dlv_1', timestamp: new Date(now), payload: body, secret }),
  });

  it('makes whsec_ secrets of 32 random bytes, each different', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(secret);
  });

  it('signs with every secret while rotating: either one verifies, a third does not', () => {
    const [previous, current] = [newWebhookSecret(), newWebhookSecret()];
    const headers = signed([current, previous]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(headers['webhook-signature'].split(' ')[0]).toBe(signed(current)['webhook-signature']);
    for (const secret of [previous, current, [current, previous]]) {
      expect(constructEvent(body, headers, secret, { now })).toMatchObject({ id: 'evt_1', type: 'session.created', data: { a: 1 } });
    }
    expect(constructEvent(Buffer.from(body), new Headers(headers), current, { now }).id).toBe('evt_1');
    expect(failure(() => constructEvent(body, headers, newWebhookSecret(), { now }))).toBe('no_matching_signature');
    expect(signWebhook({ id: 'dlv_1', timestamp: now / 1000, payload: body, secret: [] })).toBe('');
  });

  it.each([
    ['a changed body', (h: Record<string, string>) => ({ headers: h, body: body.replace('"a":1', '"a":2') })],
    ['another webhook-id', (h: Record<string, string>) => ({ headers: { ...h, 'webhook-id': 'dlv_2' }, body })],
    ['a changed timestamp', (h: Record<string, string>) => ({ headers: { ...h, 'webhook-timestamp': String(now / 1000 + 1) }, body })],
    ['an empty signature', (h: Record<string, string>) => ({ headers: { ...h, 'webhook-signature': '' }, body })],
    [
      'a v2 signature only',
      (h: Record<string, string>) => ({ headers: { ...h, 'webhook-signature': h['webhook-signature'].replace('v1,', 'v2,') }, body }),
    ],
  ])('refuses what it signed with %s', (_what, tamper) => {
    const secret = newWebhookSecret();
    const { headers, body: received } = tamper(signed(secret));
    expect(() => constructEvent(received, headers, secret, { now })).toThrow(WebhookVerificationError);
  });

  it('refuses a body that is JSON but not a broker event', () => {
    const secret = newWebhookSecret();
    const payload = '{"id":"evt_1"}';
    const headers = { ...signed(secret), 'webhook-signature': signWebhook({ id: 'dlv_1', timestamp: now / 1000, payload, secret }) };
    expect(failure(() => constructEvent(payload, headers, secret, { now }))).toBe('invalid_body');
  });
});

describe('constructInterceptRequest', () => {
  const secret = newWebhookSecret();
  const signed = (body: unknown) => {
    const payload = JSON.stringify(body);
    const timestamp = Math.floor(Date.now() / 1000);
    return {
      payload,
      headers: {
        'webhook-id': 'i1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook({ id: 'i1', timestamp, payload, secret }),
      },
    };
  };
  const question = {
    id: 'i1',
    type: 'interaction.intercept',
    timestamp: '2031-01-01T00:00:00.000Z',
    data: {
      session: { id: 's1' },
      interaction: {
        id: 'i1',
        channel: 'sms',
        from: '+2348030000001',
        to: '+2348030000002',
        text: 'hi',
        createdAt: '2031-01-01T00:00:00.000Z',
      },
    },
  };

  it('returns a signed intercept request, typed', () => {
    const { payload, headers } = signed(question);
    const request = constructInterceptRequest(payload, headers, secret);
    expect(request.type).toBe('interaction.intercept');
    expect(request.data.interaction.text).toBe('hi');
  });

  it('refuses a signed body of another type, and one signed with another secret', () => {
    const other = signed({ ...question, type: 'message.relayed' });
    expect(() => constructInterceptRequest(other.payload, other.headers, secret)).toThrow(WebhookVerificationError);
    const { payload, headers } = signed(question);
    expect(() => constructInterceptRequest(payload, headers, newWebhookSecret())).toThrow(/No webhook-signature matches/);
  });
});
