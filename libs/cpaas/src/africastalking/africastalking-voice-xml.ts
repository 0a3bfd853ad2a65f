/**
 * The Voice XML documents the broker answers Africa's Talking with. Written by hand (three elements,
 * every attribute and text escaped); the tests compare each, as parsed XML, with what the
 * `africastalking` package's ActionBuilder builds (and validates) for the same instruction.
 */
import type { WebhookAnswer } from '../provider';

const AFRICASTALKING_XML_CONTENT_TYPE = 'application/xml';

/** The inbound call connected to `to`, showing `callerId` (the proxy number). */
export function dialXml(req: { to: string; callerId: string }): string {
  return document(`<Dial phoneNumbers="${escape(req.to)}" callerId="${escape(req.callerId)}"/>`);
}

/** Says `text`; the call ends when the document does. */
export function sayXml(text: string): string {
  return document(`<Say>${escape(text)}</Say>`);
}

/** Refuses the call without answering it. */
export function rejectXml(): string {
  return document('<Reject/>');
}

/** Nothing to do (the end-of-call notification, an SMS webhook). */
export function emptyXml(): string {
  return document('');
}

export function xmlAnswer(body: string): WebhookAnswer {
  return { status: 200, contentType: AFRICASTALKING_XML_CONTENT_TYPE, body };
}

function document(inner: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${inner}</Response>`;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}
