/**
 * Vonage's call-control language (NCCO) for the voice bridge: an inbound call to a proxy number
 * is answered with a `connect` action that calls the other participant `from` the proxy number,
 * with an `eventUrl` back to the broker so the bridged leg's outcome reaches the breaker.
 * Numbers in an NCCO are digits without the `+` (ncco-schema.json).
 */
import type { WebhookAnswer } from '../provider';

const NCCO_CONTENT_TYPE = 'application/json';
/** Seconds the callee's phone rings before the leg ends as `timeout` (Vonage's default is 60). */
const VONAGE_CONNECT_RING_TIMEOUT_SEC = 45;

export type NccoAction =
  | {
      action: 'connect';
      from: string;
      timeout: number;
      eventUrl: [string];
      eventMethod: 'POST';
      endpoint: [{ type: 'phone'; number: string }];
    }
  | { action: 'talk'; text: string };

/** `+447700900001` → `447700900001`. */
const vonageNumber = (e164: string): string => e164.replace(/^\+/, '');

export function connectNcco(req: { to: string; callerId: string; eventUrl: string }): NccoAction[] {
  return [
    {
      action: 'connect',
      from: vonageNumber(req.callerId),
      timeout: VONAGE_CONNECT_RING_TIMEOUT_SEC,
      eventUrl: [req.eventUrl],
      eventMethod: 'POST',
      endpoint: [{ type: 'phone', number: vonageNumber(req.to) }],
    },
  ];
}

/** Talk actions take at most 1,500 characters (ncco-schema.json); a longer text is cut. */
export function talkNcco(text: string): NccoAction[] {
  return [{ action: 'talk', text: text.slice(0, 1500) }];
}

export function nccoAnswer(ncco: NccoAction[]): WebhookAnswer {
  return { status: 200, contentType: NCCO_CONTENT_TYPE, body: JSON.stringify(ncco) };
}
