import { hash, randomBytes } from 'node:crypto';

/** API keys are long random strings, so one SHA-256 is enough to store them safely. One-shot: no Hash object per request. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function newApiKey(): string {
  return `sk_${randomBytes(24).toString('base64url')}`;
}

export function apiKeyPrefix(key: string): string {
  return key.slice(0, 10);
}
