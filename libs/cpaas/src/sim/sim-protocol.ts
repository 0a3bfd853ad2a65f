/**
 * The simulator's wire contract, shared by the `sim` adapter (which speaks it) and the simulator
 * app (which answers it): paths, bodies, webhook payloads, the voice instruction format and the
 * magic callee numbers. apps/cpaas-sim/README.md documents it for people.
 */
import type { CallAnswer, InboundEvent, ProviderOperation, StatusEvent } from '../provider';

/** The operations the simulator's provider API serves (a vendor has more, e.g. `numbers`). */
export type SimOperation = Exclude<ProviderOperation, 'numbers'>;

/** Base path of one simulated provider's API, relative to the simulator's base URL. */
export const simApiPath = (provider: string): string => `/providers/${encodeURIComponent(provider)}/v1`;

export interface SimBindBody {
  sessionId: string;
  proxyNumber: string;
  participants: [string, string];
}
export interface SimUnbindBody {
  sessionId?: string;
  proxyNumber?: string;
}
export interface SimSmsBody {
  from: string;
  to: string;
  text: string;
}
export interface SimCallBody {
  from: string;
  to: string;
}

/** Error codes in the simulator's 4xx/5xx problem+json answers (`code` member). */
export type SimErrorCode = 'invalid-number' | 'bad-request' | 'provider-error';

/** Webhook bodies, posted to `${brokerUrl}/v1/providers/:name/inbound/sms|voice` and `/status`. */
export type SimInboundSmsWebhook = Omit<Extract<InboundEvent, { channel: 'sms' }>, 'channel'>;
export type SimInboundVoiceWebhook = Omit<Extract<InboundEvent, { channel: 'voice' }>, 'channel'>;
export type SimStatusWebhook = StatusEvent;

/**
 * The broker's answer to an inbound voice webhook, as JSON (the simulator's TwiML):
 * `bridge` connects the caller to `to` showing `callerId`; `say` plays `text` and hangs up.
 */
export type SimVoiceInstruction = { action: 'bridge'; to: string; callerId: string } | { action: 'say'; text: string };

export const SIM_VOICE_INSTRUCTION_CONTENT_TYPE = 'application/json';

/** The instruction in a voice webhook answer, or undefined when the answer is not one. */
export function parseSimVoiceInstruction(body: string): SimVoiceInstruction | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const instruction = value as Record<string, unknown>;
  if (instruction.action === 'bridge' && typeof instruction.to === 'string' && typeof instruction.callerId === 'string')
    return { action: 'bridge', to: instruction.to, callerId: instruction.callerId };
  if (instruction.action === 'say' && typeof instruction.text === 'string') return { action: 'say', text: instruction.text };
  return undefined;
}

/** Callee numbers that make a simulated call end the way their name says (SIP codes as mnemonics). */
export const SIM_MAGIC_NUMBERS = {
  busy: '+15550000486',
  noAnswer: '+15550000408',
  declined: '+15550000603',
} as const;

/** How a simulated callee answers: by magic number, otherwise `completed`. */
export function simCalleeAnswer(to: string): CallAnswer {
  if (to === SIM_MAGIC_NUMBERS.busy) return 'busy';
  if (to === SIM_MAGIC_NUMBERS.noAnswer) return 'no-answer';
  if (to === SIM_MAGIC_NUMBERS.declined) return 'declined';
  return 'completed';
}

/** How long a completed simulated call lasts, unless the inbound trigger says otherwise. */
export const SIM_COMPLETED_CALL_SEC = 30;
