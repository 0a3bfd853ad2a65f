/**
 * Checks of the provider API's request bodies, written by hand because they run after the fault
 * switch (a provider that is down answers nothing, valid or not) and name their error the way a
 * provider does: `invalid-number` when any number is not E.164, `bad-request` otherwise.
 */
import { isE164, type SimBindBody, type SimCallBody, type SimSmsBody, type SimUnbindBody } from '@app/cpaas';
import type { FieldError } from '../problem/sim-problem';

export type Checked<T> = { ok: true; value: T } | { ok: false; code: 'invalid-number' | 'bad-request'; errors: FieldError[] };

class BodyCheck {
  readonly errors: FieldError[] = [];
  private badNumber = false;

  constructor(readonly fields: Record<string, unknown>) {}

  number(field: string, value = this.fields[field]): string {
    if (!isE164(value)) {
      this.badNumber = true;
      this.errors.push({ field, message: 'must be an E.164 number, e.g. +2348030000001' });
    }
    return value as string;
  }

  text(field: string, min: number, max: number): string {
    const value = this.fields[field];
    if (typeof value !== 'string' || value.length < min || value.length > max)
      this.errors.push({ field, message: `must be a string of ${min} to ${max} characters` });
    return value as string;
  }

  result<T>(value: T): Checked<T> {
    if (this.errors.length === 0) return { ok: true, value };
    return { ok: false, code: this.badNumber ? 'invalid-number' : 'bad-request', errors: this.errors };
  }
}

function check(body: unknown): BodyCheck {
  return new BodyCheck(typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {});
}

export function checkBind(body: unknown): Checked<SimBindBody> {
  const c = check(body);
  const sessionId = c.text('sessionId', 1, 200);
  const proxyNumber = c.number('proxyNumber');
  const participants = c.fields.participants;
  if (!Array.isArray(participants) || participants.length !== 2) {
    c.errors.push({ field: 'participants', message: 'must be an array of two E.164 numbers' });
    return c.result({ sessionId, proxyNumber, participants: ['', ''] });
  }
  const [a, b] = participants.map((number: unknown, i) => c.number(`participants[${i}]`, number));
  if (c.errors.length === 0 && a === b) c.errors.push({ field: 'participants', message: 'must be two different numbers' });
  return c.result({ sessionId, proxyNumber, participants: [a, b] });
}

export function checkUnbind(bindingId: string, body: unknown): Checked<SimUnbindBody & { bindingId: string }> {
  const c = check(body);
  if (bindingId.length === 0 || bindingId.length > 200) c.errors.push({ field: 'bindingId', message: 'must be 1 to 200 characters' });
  const sessionId = c.fields.sessionId === undefined ? undefined : c.text('sessionId', 1, 200);
  const proxyNumber = c.fields.proxyNumber === undefined ? undefined : c.number('proxyNumber');
  return c.result({ bindingId, sessionId, proxyNumber });
}

export function checkSms(body: unknown): Checked<SimSmsBody> {
  const c = check(body);
  return c.result({ from: c.number('from'), to: c.number('to'), text: c.text('text', 1, 1600) });
}

export function checkCall(body: unknown): Checked<SimCallBody> {
  const c = check(body);
  return c.result({ from: c.number('from'), to: c.number('to') });
}
