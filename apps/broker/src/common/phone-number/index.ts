/**
 * What a phone number is to every feature that handles one (numbers, destinations, sessions, relay):
 * its E.164 form and the channels a number carries. Imports no feature, so each can use it.
 */

/** What a number carries: calls, text messages. */
export type Channel = 'voice' | 'sms';

/** An E.164 number: `+`, a country code, up to 15 digits in all. */
export const E164 = /^\+[1-9]\d{6,14}$/;
