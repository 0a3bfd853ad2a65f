import { Inject, Injectable } from '@nestjs/common';
import { systemClock, type Clock } from '@app/clock';
import { SIM_COMPLETED_CALL_SEC, simCalleeAnswer, type SimOperation, type SimStatusWebhook } from '@app/cpaas';
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import type { SimulatorConfig } from '../config/sim-config';
import { decideFault } from '../faults/fault-settings';
import { HeldRequests, drop } from '../faults/held-requests';
import { PROBLEM_CONTENT_TYPE, simProblem } from '../problem/sim-problem';
import type { CallOutcome, SimCallRecord } from '../providers/call-log';
import { SimulatedProviders, type SimulatedProvider } from '../providers/simulated-providers';
import { SIM_CONFIG } from '../sim-config.token';
import { BrokerWebhooks } from '../webhooks/broker-webhooks';
import { checkBind, checkCall, checkSms, checkUnbind, type Checked } from './provider-api.validation';

/** A provider API request: its JSON body and, for unbind, the binding id from the path. */
interface ProviderApiRequest {
  body: unknown;
  bindingId?: string;
}

type Details = Omit<SimCallRecord, 'seq' | 'type' | 'at' | 'outcome'>;

/** How the provider answers a request when no fault gets in the way. */
interface Answer {
  status: number;
  body: object;
  outcome: CallOutcome;
  details: Details;
  receipt?: SimStatusWebhook;
}

/**
 * The provider API of every simulated provider. Each request is logged on arrival, then waits
 * `latencyMs`, then meets the fault switch; only a request that gets through is validated and
 * answered, so a provider that is down says nothing about the request's content.
 */
@Injectable()
export class ProviderApi {
  private readonly random: () => number;
  private readonly clock: Clock;

  constructor(
    private readonly providers: SimulatedProviders,
    private readonly held: HeldRequests,
    private readonly webhooks: BrokerWebhooks,
    @Inject(SIM_CONFIG) config: SimulatorConfig,
  ) {
    this.random = config.random ?? Math.random;
    this.clock = config.clock ?? systemClock;
  }

  async handle(name: string, operation: SimOperation, request: ProviderApiRequest, response: Response): Promise<void> {
    const provider = this.providers.get(name);
    const { latencyMs } = provider.faults;
    const fault = decideFault(provider.faults, this.random);
    const at = new Date(this.clock.now()).toISOString();
    const answer = fault === 'ok' ? this.answer(provider, operation, request, at) : undefined;
    provider.calls.add({ type: operation, at, outcome: answer?.outcome ?? fault, ...(answer?.details ?? describe(request)) });

    if (latencyMs > 0 && !(await this.held.delay(response, latencyMs))) return;
    switch (fault) {
      case 'down':
        return drop(response);
      case 'timeout':
        return this.held.hold(response);
      case 'error':
        response
          .status(503)
          .type(PROBLEM_CONTENT_TYPE)
          .send(JSON.stringify(simProblem(503, 'provider-error', 'Service Unavailable', `${provider.name} is failing; try again later.`)));
        return;
      case 'reject':
        // A cheerful 200 that carries no id: "a rejection counts as a failure".
        response.status(200).json({ status: 'accepted' });
        return;
    }
    const { status, body, receipt } = answer!;
    if (status >= 400) response.status(status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
    else response.status(status).json(body);
    if (receipt && provider.statusWebhooks) this.webhooks.postInBackground(provider.name, 'status', receipt);
  }

  private answer(provider: SimulatedProvider, operation: SimOperation, request: ProviderApiRequest, at: string): Answer {
    switch (operation) {
      case 'bind':
        return ok(checkBind(request.body), request, (bind) => {
          const bindingId = `bnd_${randomUUID()}`;
          return { status: 201, body: { bindingId, status: 'bound' }, details: { ...bind, bindingId } };
        });
      case 'unbind':
        return ok(checkUnbind(request.bindingId ?? '', request.body), request, (unbind) => ({
          status: 200,
          body: { bindingId: unbind.bindingId, status: 'unbound' },
          details: unbind,
        }));
      case 'sms':
        return ok(checkSms(request.body), request, (sms) => {
          const messageId = `msg_${randomUUID()}`;
          return {
            status: 201,
            body: { messageId, status: 'queued' },
            details: { ...sms, messageId },
            receipt: { type: 'message.delivered', eventId: `evt_${randomUUID()}`, messageId, from: sms.from, to: sms.to, at },
          };
        });
      case 'call':
        return ok(checkCall(request.body), request, (call) => {
          const callId = `call_${randomUUID()}`;
          const answer = simCalleeAnswer(call.to);
          const durationSec = answer === 'completed' ? SIM_COMPLETED_CALL_SEC : 0;
          return {
            status: 201,
            body: { callId, answer, durationSec },
            details: { ...call, callId, answer, durationSec },
            receipt: {
              type: 'call.completed',
              eventId: `evt_${randomUUID()}`,
              callId,
              from: call.from,
              to: call.to,
              answer,
              durationSec,
              at,
            },
          };
        });
      case 'health':
        return { status: 200, body: { status: 'ok', provider: provider.name }, outcome: 'ok', details: {} };
    }
  }
}

function ok<T>(checked: Checked<T>, request: ProviderApiRequest, answer: (value: T) => Omit<Answer, 'outcome'>): Answer {
  if (checked.ok) return { ...answer(checked.value), outcome: 'ok' };
  const title = checked.code === 'invalid-number' ? 'Invalid number' : 'Invalid request';
  const detail = checked.errors.map((e) => `${e.field}: ${e.message}`).join('; ');
  return {
    status: 400,
    body: simProblem(400, checked.code, title, detail, checked.errors),
    outcome: checked.code,
    details: describe(request),
  };
}

/** What a request said, as far as it can be read, for the log of a request that was not answered normally. */
function describe(request: ProviderApiRequest): Details {
  const fields = typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
  const details: Details = {};
  for (const key of ['from', 'to', 'text', 'sessionId', 'proxyNumber'] as const) {
    const value = fields[key];
    if (typeof value === 'string') details[key] = value.slice(0, 1600);
  }
  if (Array.isArray(fields.participants))
    details.participants = fields.participants.filter((p): p is string => typeof p === 'string').slice(0, 2);
  if (request.bindingId) details.bindingId = request.bindingId;
  return details;
}
