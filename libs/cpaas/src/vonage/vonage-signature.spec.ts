import { generateKeyPairSync } from 'node:crypto';
import { tokenGenerate } from '@vonage/jwt';
import jwt from 'jsonwebtoken';
import { VONAGE_SIGNATURE_TOLERANCE_SEC, verifyVonageWebhook, vonagePayloadHash } from './vonage-signature';

// Vectors are signed with jsonwebtoken, the library @vonage/jwt itself signs and verifies with,
// with the claims Vonage's signed webhooks carry (iat, jti, iss, payload_hash, api_key, application_id).
const secret = 'signature-secret-of-the-account-0123456789';
const applicationId = 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab';
const body = Buffer.from(JSON.stringify({ message_uuid: 'aaaaaaaa-bbbb-cccc-dddd-0123456789ab', from: '447700900001', text: 'hi' }));
const nowSec = Math.floor(Date.now() / 1000);

/** A claim given as undefined is left out (`iat` included: jsonwebtoken would add one). */
function token(claims: Record<string, unknown> = {}, key = secret): string {
  const all: Record<string, unknown> = {
    iat: nowSec,
    jti: 'c5ba8f24-1a14-4c10-bfdf-3fbe8ce511b5',
    iss: 'Vonage',
    payload_hash: vonagePayloadHash(body),
    api_key: 'abcd1234',
    application_id: applicationId,
    ...claims,
  };
  const present = Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined));
  return jwt.sign(present, key, { algorithm: 'HS256', noTimestamp: present.iat === undefined });
}

function check(authorization: string | undefined, overrides: { rawBody?: Buffer; nowMs?: number; applicationId?: string } = {}) {
  return verifyVonageWebhook({
    signatureSecret: secret,
    headers: authorization === undefined ? {} : { authorization },
    rawBody: overrides.rawBody ?? body,
    nowMs: overrides.nowMs ?? nowSec * 1000,
    applicationId: overrides.applicationId ?? applicationId,
    apiKey: 'abcd1234',
  });
}

describe('Vonage webhook signatures', () => {
  it('accepts a token signed with the signature secret whose payload_hash is the body', () => {
    expect(check(`Bearer ${token()}`)).toBe('valid');
    expect(
      verifyVonageWebhook({
        signatureSecret: secret,
        headers: { Authorization: `Bearer ${token()}` },
        rawBody: body,
        nowMs: nowSec * 1000,
      }),
    ).toBe('valid');
  });

  it('a missing or non-bearer Authorization header is "missing" (401)', () => {
    expect(check(undefined)).toBe('missing');
    expect(check('Basic YWJjZDEyMzQ6c2VjcmV0')).toBe('missing');
    expect(check('Bearer')).toBe('missing');
  });

  it('refuses a body changed after signing, even by one byte', () => {
    const changed = Buffer.from(body.toString().replace('hi', 'hI'));
    expect(check(`Bearer ${token()}`, { rawBody: changed })).toBe('invalid');
  });

  it('refuses a token signed with another secret', () => {
    expect(check(`Bearer ${token({}, 'another-secret-of-another-account-987654')}`)).toBe('invalid');
  });

  it('refuses a token without payload_hash, or with one that is not a SHA-256', () => {
    expect(check(`Bearer ${token({ payload_hash: undefined })}`)).toBe('invalid');
    expect(check(`Bearer ${token({ payload_hash: 'abc' })}`)).toBe('invalid');
  });

  it('refuses an expired token', () => {
    expect(check(`Bearer ${token({ iat: nowSec - 120, exp: nowSec - 60 })}`)).toBe('invalid');
  });

  it(`accepts iat up to ${VONAGE_SIGNATURE_TOLERANCE_SEC} s from our clock, either way, and no further`, () => {
    const signed = `Bearer ${token()}`;
    expect(check(signed, { nowMs: (nowSec + VONAGE_SIGNATURE_TOLERANCE_SEC) * 1000 })).toBe('valid');
    expect(check(signed, { nowMs: (nowSec + VONAGE_SIGNATURE_TOLERANCE_SEC + 1) * 1000 })).toBe('invalid');
    expect(check(signed, { nowMs: (nowSec - VONAGE_SIGNATURE_TOLERANCE_SEC) * 1000 })).toBe('valid');
    expect(check(signed, { nowMs: (nowSec - VONAGE_SIGNATURE_TOLERANCE_SEC - 1) * 1000 })).toBe('invalid');
    expect(check(`Bearer ${token({ iat: undefined })}`)).toBe('invalid');
  });

  it('refuses a token for another application or another API key', () => {
    expect(check(`Bearer ${token({ application_id: 'ffffffff-bbbb-cccc-dddd-0123456789ab' })}`)).toBe('invalid');
    expect(check(`Bearer ${token({ api_key: 'zzzz9999' })}`)).toBe('invalid');
  });

  it('refuses an unsigned token and an application JWT made by @vonage/jwt (RS256, no payload_hash)', () => {
    const [header, payload] = token().split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    expect(header).toBeTruthy();
    expect(check(`Bearer ${none}`)).toBe('invalid');
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    expect(check(`Bearer ${tokenGenerate(applicationId, privateKey)}`)).toBe('invalid');
  });

  it('refuses garbage and oversized tokens without throwing', () => {
    expect(check('Bearer not.a.jwt')).toBe('invalid');
    expect(check(`Bearer ${'a'.repeat(9000)}`)).toBe('invalid');
  });
});
