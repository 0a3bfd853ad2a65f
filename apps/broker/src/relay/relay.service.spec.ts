/**
 * RelayService against its repositories' interfaces (in-memory ones): which relays are sent, retried or
 * given up, and which events the customer gets for each. The provider is scripted; the SQL and the
 * providers' real webhooks are covered by test/relay.e2e-spec.ts.
 */
import {
  ProviderCallFailure,
  type ProviderResult,
  type SendSmsRequest,
  type SmsOutcome,
  type StatusEvent,
  type WebhookAnswer,
} from '@app/cpaas';
import { InMemoryInteractionRepository, InMemorySessionRepository } from '../../../../test/support/in-memory-repositories';
import { systemClock } from '@app/clock';
import { loadConfig } from '../config';
import type { InterceptClient, InterceptDecision, InterceptQuestion } from '../intercept';
import { BrokerMetrics } from '../metrics/broker-metrics';
import type { ProviderRegistry } from '../providers/provider-registry';
import type { Session } from '../sessions/session.entity';
import { RelayService } from './relay.service';
import { SessionRelayLimit } from './session-relay-limit';

const ALICE = '+2348030000001';
const BOB = '+2348030000002';
const PROXY = '+2349010000001';
const RETRY_MS = 2_000;

const answer = (body: unknown): WebhookAnswer => ({ status: 200, contentType: 'application/json', body: JSON.stringify(body) });

/** The registry's faces the relay uses: one provider whose sendSms answers as scripted, and what it was told. */
class ScriptedProvider {
  readonly sent: SendSmsRequest[] = [];
  readonly recorded: Array<{ operation: string; ok: boolean }> = [];
  next: Array<ProviderResult<{ messageId: string }>> = [];

  registry(): ProviderRegistry {
    const adapter = {
      repliesInline: false,
      smsAnswer: (outcome: SmsOutcome) => answer(outcome),
      voiceBridgeInstruction: (req: { to: string; callerId: string }) => answer({ bridge: req }),
      noSessionAnswer: () => undefined,
      voiceSayInstruction: (req: { text: string }) => answer({ say: req.text }),
      sendSms: (req: SendSmsRequest) => {
        this.sent.push(req);
        return Promise.resolve(this.next.shift() ?? { ok: true, value: { messageId: `m${this.sent.length}` }, latencyMs: 1 });
      },
    };
    const registry = {
      webhooks: () => adapter,
      call: (_name: string, _operation: string, _probe: boolean, run: (p: typeof adapter) => Promise<unknown>) => run(adapter),
      record: (_name: string, operation: string, _probe: boolean, outcome: { ok: boolean }) => {
        this.recorded.push({ operation, ok: outcome.ok });
      },
    };
    return registry as unknown as ProviderRegistry;
  }
}

const unavailable: ProviderResult<never> = {
  ok: false,
  latencyMs: 1,
  failure: new ProviderCallFailure('primary', { countsAgainstProvider: true, cause: 'http-5xx' }, 'HTTP 503 on sms'),
};
const refused: ProviderResult<never> = {
  ok: false,
  latencyMs: 1,
  failure: new ProviderCallFailure('primary', { countsAgainstProvider: false, cause: 'rejected' }, 'unsubscribed recipient'),
};

/** The intercept's face the relay uses: answers as scripted, and what it was asked. */
class ScriptedIntercept {
  readonly asked: InterceptQuestion[] = [];
  next: InterceptDecision = { verdict: 'allow', outcome: 'allowed', detail: 'HTTP 204' };

  client(): InterceptClient {
    return {
      ask: (question: InterceptQuestion) => {
        this.asked.push(question);
        return Promise.resolve(this.next);
      },
    } as unknown as InterceptClient;
  }
}

describe('RelayService', () => {
  let now: Date;
  let intercept: ScriptedIntercept;
  let sessions: InMemorySessionRepository;
  let interactions: InMemoryInteractionRepository;
  let provider: ScriptedProvider;
  let relay: RelayService;
  let session: Session;

  const sms = (eventId: string, text = 'hello'): Parameters<RelayService['inbound']>[1] => ({
    channel: 'sms',
    eventId,
    messageId: `in-${eventId}`,
    from: ALICE,
    to: PROXY,
    text,
    at: now.toISOString(),
  });
  const eventTypes = () => interactions.events.map((e) => e.type);
  const only = async () => {
    const [interaction] = await interactions.forSession(session.id);
    return interaction;
  };

  beforeEach(async () => {
    now = new Date();
    sessions = new InMemorySessionRepository(() => now);
    interactions = new InMemoryInteractionRepository(sessions, new Map([['primary', [PROXY]]]), () => now);
    provider = new ScriptedProvider();
    intercept = new ScriptedIntercept();
    const config = loadConfig({ RELAY_RETRY_INTERVAL_MS: String(RETRY_MS) });
    relay = new RelayService(
      interactions,
      sessions,
      config,
      provider.registry(),
      intercept.client(),
      new SessionRelayLimit(config, systemClock, new BrokerMetrics()),
      interactions,
      systemClock,
    );
    session = sessions.addPending({
      accountId: 'acct',
      provider: 'primary',
      channels: ['voice', 'sms'],
      participants: [ALICE, BOB],
      proxyNumber: PROXY,
    });
    await sessions.activate(
      { ...session, bindingId: 'b1' },
      { type: 'session.created', accountId: 'acct', sessionId: session.id, callbackUrl: null, data: {} },
    );
  });

  it('relays an inbound SMS to the other participant from the proxy number, and tells the customer once', async () => {
    const result = await relay.inbound('primary', sms('e1'));

    expect(provider.sent).toEqual([{ from: PROXY, to: BOB, text: 'hello' }]);
    const interaction = await only();
    expect(interaction).toMatchObject({ status: 'relayed', providerRef: 'm1', attempts: 1, nextAttemptAt: null });
    expect(result).toEqual({ kind: 'answer', answer: answer({ kind: 'relayed', interactionId: interaction.id }) });
    expect(eventTypes()).toEqual(['message.relayed']);
    // When the message came in, not when the relay went out.
    expect(interactions.events[0].receivedAt).toEqual(interaction.createdAt);
  });

  it('relays a webhook delivered twice once', async () => {
    await relay.inbound('primary', sms('e1'));
    await relay.inbound('primary', sms('e1'));

    expect(provider.sent).toHaveLength(1);
    expect(await interactions.forSession(session.id)).toHaveLength(1);
    expect(eventTypes()).toEqual(['message.relayed']);
  });

  it('queues the relay when the provider is down, and sends it at the retry once due', async () => {
    provider.next = [unavailable];

    const attemptedFrom = Date.now();
    const result = await relay.inbound('primary', sms('e1'));
    const attemptedBy = Date.now();

    const queued = await only();
    expect(result).toEqual({ kind: 'answer', answer: answer({ kind: 'queued', interactionId: queued.id }) });
    expect(queued).toMatchObject({ status: 'pending', attempts: 1, lastError: 'primary: HTTP 503 on sms' });
    // The first retry waits RELAY_RETRY_INTERVAL_MS (the backoff's first step) from the attempt, read on the service's clock.
    expect(queued.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(attemptedFrom + RETRY_MS);
    expect(queued.nextAttemptAt!.getTime()).toBeLessThanOrEqual(attemptedBy + RETRY_MS);
    expect(await relay.retryDue()).toBe(0);

    now = queued.nextAttemptAt!;
    expect(await relay.retryDue()).toBe(1);

    expect(await only()).toMatchObject({ status: 'relayed', attempts: 2, lastError: null });
    expect(provider.sent).toHaveLength(2);
    expect(eventTypes()).toEqual(['message.relayed']);
  });

  it('gives up at once, telling the customer, when the provider refuses the message itself', async () => {
    provider.next = [refused];

    await relay.inbound('primary', sms('e1'));

    expect(await only()).toMatchObject({ status: 'failed', nextAttemptAt: null, lastError: 'primary: unsubscribed recipient' });
    expect(eventTypes()).toEqual(['message.failed']);
    expect(interactions.events[0].data).toMatchObject({ attempts: 1, reason: 'primary: unsubscribed recipient' });
  });

  it('gives up a queued relay whose session ended before its retry, without sending it', async () => {
    provider.next = [unavailable];
    await relay.inbound('primary', sms('e1'));
    await sessions.transaction(async (tx) => tx.end([{ ...session, status: 'closed', endedAt: now }]));

    now = new Date(now.getTime() + 60_000);
    await relay.retryDue();

    expect(provider.sent).toHaveLength(1);
    expect(await only()).toMatchObject({ status: 'failed', lastError: 'primary: HTTP 503 on sms' });
    expect(eventTypes()).toEqual(['message.failed']);
  });

  it('answers for numbers outside any session: not ours, or the provider’s no-session answer', async () => {
    expect(await relay.inbound('primary', { ...sms('e1'), to: '+2349019999999' })).toEqual({ kind: 'not-our-number' });
    expect(await relay.inbound('primary', { ...sms('e2'), from: '+2348039999999' })).toEqual({ kind: 'no-session' });
    expect(provider.sent).toEqual([]);
  });

  it('records a delivery report once, and only for a message it relayed', async () => {
    await relay.inbound('primary', sms('e1'));
    const delivered: StatusEvent = {
      type: 'message.delivered',
      eventId: 's1',
      messageId: 'm1',
      from: PROXY,
      to: BOB,
      at: now.toISOString(),
    };

    expect(await relay.status('primary', delivered)).toBe(true);
    expect(await relay.status('primary', { ...delivered, messageId: 'unknown' })).toBe(false);

    expect(await only()).toMatchObject({ status: 'delivered' });
    expect(eventTypes()).toEqual(['message.relayed']);
  });

  it('settles a bridged call once: one call.completed event and one outcome for the breaker', async () => {
    await relay.inbound('primary', { channel: 'voice', eventId: 'v1', callId: 'c1', from: ALICE, to: PROXY, at: now.toISOString() });
    const completed: StatusEvent = {
      type: 'call.completed',
      eventId: 's1',
      callId: 'c1',
      from: ALICE,
      to: BOB,
      answer: 'completed',
      durationSec: 42,
      at: now.toISOString(),
    };

    expect(await relay.status('primary', completed)).toBe(true);
    expect(await relay.status('primary', completed)).toBe(true);

    expect(await only()).toMatchObject({ channel: 'voice', status: 'completed', durationSec: 42 });
    expect(eventTypes()).toEqual(['call.completed']);
    expect(provider.recorded).toEqual([{ operation: 'call', ok: true }]);
  });
});
