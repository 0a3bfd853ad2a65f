import request from 'supertest';

export const API_KEY = 'test-key-aaaaaaaaaaaaaaaaaaaaaaaa';
export const OTHER_API_KEY = 'test-key-bbbbbbbbbbbbbbbbbbbbbbbb';
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** Environment giving the broker two accounts (one per key) and the admin API. */
export const AUTH_ENV = { BROKER_API_KEY: `${API_KEY},${OTHER_API_KEY}`, ADMIN_TOKEN };

let counter = 0;
/** Two distinct E.164 numbers no other test in this file uses. */
export function freshPair(): [string, string] {
  counter += 1;
  const base = 2348030000000 + counter * 2;
  return [`+${base}`, `+${base + 1}`];
}

export function sessionBody(participants: [string, string], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { channel: 'sms', participants: participants.map((number) => ({ number })), ...extra };
}

export function createSession(baseUrl: string, body: Record<string, unknown>, key = API_KEY, idempotencyKey?: string): request.Test {
  const req = request(baseUrl).post('/v1/sessions').set('authorization', `Bearer ${key}`);
  if (idempotencyKey) req.set('idempotency-key', idempotencyKey);
  return req.send(body);
}
