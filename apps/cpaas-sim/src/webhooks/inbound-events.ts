import { Inject, Injectable } from '@nestjs/common';
import { systemClock, type Clock } from '@app/clock';
import {
  SIM_COMPLETED_CALL_SEC,
  isE164,
  parseSimVoiceInstruction,
  simCalleeAnswer,
  type SimInboundSmsWebhook,
  type SimInboundVoiceWebhook,
  type SimStatusWebhook,
} from '@app/cpaas';
import { randomUUID } from 'node:crypto';
import type { SimulatorConfig } from '../config/sim-config';
import { SimProblem } from '../problem/sim-problem';
import { SimulatedProviders } from '../providers/simulated-providers';
import { SIM_CONFIG } from '../sim-config.token';
import { BrokerWebhooks, type BrokerAnswer, type BrokerWebhookPath } from './broker-webhooks';

interface InboundTrigger {
  channel: 'sms' | 'voice';
  from: string;
  to: string;
  text?: string;
  /** How long a bridged call lasts when answered (default 30 s). */
  durationSec?: number;
}

/** The broker's answer, plus `x-sim-*` headers saying what the provider did with it. */
interface InboundResult extends BrokerAnswer {
  headers: Record<string, string>;
}

/**
 * A phone user texting or calling a proxy number: the provider posts the inbound webhook to the
 * broker; for a call it then follows the broker's instruction (bridge: place the call, log it,
 * post `call.completed`) before reporting back.
 */
@Injectable()
export class InboundEvents {
  private readonly clock: Clock;

  constructor(
    private readonly providers: SimulatedProviders,
    private readonly webhooks: BrokerWebhooks,
    @Inject(SIM_CONFIG) config: SimulatorConfig,
  ) {
    this.clock = config.clock ?? systemClock;
  }

  async deliver(name: string, trigger: InboundTrigger): Promise<InboundResult> {
    const provider = this.providers.get(name);
    const at = this.now();
    const eventId = `evt_${randomUUID()}`;
    if (trigger.channel === 'sms') {
      const messageId = `msg_${randomUUID()}`;
      const sms: SimInboundSmsWebhook = { eventId, messageId, from: trigger.from, to: trigger.to, text: trigger.text ?? '', at };
      const answer = await this.post(provider.name, 'inbound/sms', sms);
      return { ...answer, headers: { 'x-sim-event-id': eventId, 'x-sim-message-id': messageId } };
    }

    const callId = `call_${randomUUID()}`;
    const call: SimInboundVoiceWebhook = { eventId, callId, from: trigger.from, to: trigger.to, at };
    const answer = await this.post(provider.name, 'inbound/voice', call);
    const headers: Record<string, string> = { 'x-sim-event-id': eventId, 'x-sim-call-id': callId };
    const instruction = answer.status < 300 ? parseSimVoiceInstruction(answer.body) : undefined;
    if (instruction?.action !== 'bridge' || !isE164(instruction.to) || !isE164(instruction.callerId)) return { ...answer, headers };

    const bridgedCallId = `call_${randomUUID()}`;
    const callee = simCalleeAnswer(instruction.to);
    const durationSec = callee === 'completed' ? (trigger.durationSec ?? SIM_COMPLETED_CALL_SEC) : 0;
    const completedAt = this.now();
    provider.calls.add({
      type: 'call',
      at: completedAt,
      outcome: 'ok',
      from: instruction.callerId,
      to: instruction.to,
      callId: bridgedCallId,
      answer: callee,
      durationSec,
      bridgedFrom: callId,
    });
    const status: SimStatusWebhook = {
      type: 'call.completed',
      eventId: `evt_${randomUUID()}`,
      callId,
      bridgedCallId,
      from: instruction.callerId,
      to: instruction.to,
      answer: callee,
      durationSec,
      at: completedAt,
    };
    headers['x-sim-bridged-call-id'] = bridgedCallId;
    headers['x-sim-status-webhook'] = await this.webhooks.post(provider.name, 'status', status).then(
      (statusAnswer) => String(statusAnswer.status),
      () => 'failed',
    );
    return { ...answer, headers };
  }

  private async post(provider: string, path: BrokerWebhookPath, payload: object): Promise<BrokerAnswer> {
    try {
      return await this.webhooks.post(provider, path, payload);
    } catch (error) {
      throw new SimProblem(
        502,
        'broker-unreachable',
        'Broker unreachable',
        `Cannot deliver the ${path} webhook to the broker: ${(error as Error).message}`,
      );
    }
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }
}
