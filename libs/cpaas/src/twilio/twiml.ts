/**
 * The few TwiML documents the broker answers Twilio with. Written by hand (a handful of
 * elements, every text and attribute escaped); the tests compare each, as parsed XML, with what
 * the `twilio` package's `VoiceResponse` / `MessagingResponse` make for the same instruction.
 */
import type { WebhookAnswer } from '../provider';

const TWIML_CONTENT_TYPE = 'text/xml';

/** An inbound call connected to `to`, showing `callerId`; Twilio posts the outcome to `action`. */
export function dialTwiml(req: { to: string; callerId: string; action: string }): string {
  return document(
    `<Dial callerId="${escape(req.callerId)}" action="${escape(req.action)}" method="POST"><Number>${escape(req.to)}</Number></Dial>`,
  );
}

/** Says `text`, then hangs up. */
export function sayTwiml(text: string): string {
  return document(`<Say>${escape(text)}</Say><Hangup/>`);
}

/** Refuses an inbound call without answering it (busy tone, no charge). */
export function rejectTwiml(): string {
  return document('<Reject/>');
}

/** Replies to an inbound SMS with `text`. */
export function messageTwiml(text: string): string {
  return document(`<Message>${escape(text)}</Message>`);
}

/** Nothing more to do: an SMS needs no reply, a finished dial hangs up. */
export function emptyTwiml(): string {
  return document('');
}

export function twimlAnswer(body: string): WebhookAnswer {
  return { status: 200, contentType: TWIML_CONTENT_TYPE, body };
}

function document(inner: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${inner}</Response>`;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}
