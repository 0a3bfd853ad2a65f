import type { CallAnswer, SimOperation } from '@app/cpaas';
import type { FaultOutcome } from '../faults/fault-settings';

/** How a request to the provider API ended. */
export type CallOutcome = FaultOutcome | 'invalid-number' | 'bad-request';

/** One request a simulated provider received (or, for `call`, a call it placed on a bridge instruction). */
export interface SimCallRecord {
  /** Increasing per provider, never reused (also across clears). */
  seq: number;
  type: SimOperation;
  at: string;
  outcome: CallOutcome;
  from?: string;
  to?: string;
  text?: string;
  sessionId?: string;
  proxyNumber?: string;
  participants?: string[];
  bindingId?: string;
  messageId?: string;
  callId?: string;
  answer?: CallAnswer;
  durationSec?: number;
  /** For a call placed on an inbound call's bridge instruction: that inbound call's id. */
  bridgedFrom?: string;
}

/** The last `limit` records, in arrival order; memory stays bounded whatever the call rate. */
export class CallLog {
  private records: SimCallRecord[] = [];
  private oldest = 0;
  private seq = 0;

  constructor(private readonly limit: number) {}

  add(record: Omit<SimCallRecord, 'seq'>): SimCallRecord {
    const full = { seq: ++this.seq, ...record };
    if (this.records.length < this.limit) {
      this.records.push(full);
    } else {
      this.records[this.oldest] = full;
      this.oldest = (this.oldest + 1) % this.limit;
    }
    return full;
  }

  list(): SimCallRecord[] {
    return [...this.records.slice(this.oldest), ...this.records.slice(0, this.oldest)];
  }

  get size(): number {
    return this.records.length;
  }

  clear(): void {
    this.records = [];
    this.oldest = 0;
  }
}
