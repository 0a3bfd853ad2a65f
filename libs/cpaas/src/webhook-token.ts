/**
 * Webhook authentication for vendors that sign nothing (Africa's Talking) or whose signing recipe we
 * could not confirm from their own material (Infobip): every callback URL the broker gives the vendor
 * carries a per-provider secret (`PROVIDER_<NAME>_WEBHOOK_TOKEN`) as its `token` query parameter. A
 * request without it is 401, with another one 403 (docs/providers.md#nigeria). The request log redacts
 * it (a `token` parameter is a secret whatever the route).
 */
import { timingSafeEqual } from 'node:crypto';
import type { NumberWebhooks, WebhookVerification } from './provider';

export const WEBHOOK_TOKEN_PARAM = 'token';

/** The URL with the token set as its `token` query parameter. */
export function withWebhookToken(url: string, token: string): string {
  const withToken = new URL(url);
  withToken.searchParams.set(WEBHOOK_TOKEN_PARAM, token);
  return withToken.toString();
}

/** The broker's webhook URLs for a provider, each carrying the token. */
export function tokenWebhooks(webhooks: NumberWebhooks, token: string): NumberWebhooks {
  return {
    smsUrl: withWebhookToken(webhooks.smsUrl, token),
    voiceUrl: withWebhookToken(webhooks.voiceUrl, token),
    statusCallback: withWebhookToken(webhooks.statusCallback, token),
  };
}

/** Constant-time check of the `token` parameter of the URL the vendor called. */
export function verifyWebhookToken(expected: string, url: string): WebhookVerification {
  let given: string[];
  try {
    given = new URL(url).searchParams.getAll(WEBHOOK_TOKEN_PARAM);
  } catch {
    return 'invalid';
  }
  if (given.length === 0 || given[0] === '') return 'missing';
  if (given.length > 1) return 'invalid';
  const a = Buffer.from(given[0]);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b) ? 'valid' : 'invalid';
}
