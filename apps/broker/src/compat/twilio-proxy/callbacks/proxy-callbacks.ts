/**
 * Twilio Proxy's callbacks, on the broker's events (docs/twilio-proxy-migration.md#callbacks): each goes to its
 * Service's URL form-encoded with `X-Twilio-Signature` over the full URL, keyed with the account's current
 * webhook secret, so a receiver written for Proxy verifies it with `twilio.validateRequest(secret, …)`.
 *
 * - CallbackUrl: each `message.relayed`, `message.failed` and `call.completed` of a Proxy Session, recorded in
 *   the transaction of the event itself and delivered by the broker's webhook worker (retries, endpoint
 *   breakers, public addresses only), so none is lost.
 * - InterceptCallbackUrl: asked synchronously before a relay or a bridge, in place of the broker's JSON
 *   question, for the sessions whose intercept URL is their Service's; a 403 blocks, as in Proxy.
 * - OutOfSessionCallbackUrl: each `interaction.out_of_session` on one of a Service's numbers (numbers dedicated
 *   to the account: a shared number tells nobody who writes to it).
 */
import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { Channel } from '../../../numbers/proxy-number.entity';
import { InterceptClient, type InterceptDialect, type InterceptQuestion, type InterceptRequest } from '../../../intercept';
import {
  EventOutbox,
  WebhookSecrets,
  twilioSignedForm,
  type FollowingTransaction,
  type SessionEventFollower,
  type SessionEventInput,
} from '../../../notifications';
import { ProxyInteractionRepository } from '../interactions/proxy-interaction.repository';
import { interactionCallbackParams, interceptParams, outOfSessionParams, type InterceptedInteraction } from './callback-params';
import { ProxyCallbackRepository } from './proxy-callback.repository';

/** The broker events of an interaction that Proxy's CallbackUrl hears of. */
const INTERACTION_EVENTS = new Set<string>(['message.relayed', 'message.failed', 'call.completed']);

@Injectable()
export class ProxyCallbacks implements SessionEventFollower, InterceptDialect, OnModuleInit {
  constructor(
    private readonly callbacks: ProxyCallbackRepository,
    private readonly interactions: ProxyInteractionRepository,
    private readonly outbox: EventOutbox,
    private readonly intercept: InterceptClient,
    private readonly secrets: WebhookSecrets,
  ) {}

  onModuleInit(): void {
    this.outbox.follow(this);
    this.intercept.speak(this);
  }

  async follow(event: SessionEventInput, tx: FollowingTransaction): Promise<void> {
    if (event.type === 'interaction.out_of_session') return this.outOfSession(event, tx);
    if (!INTERACTION_EVENTS.has(event.type) || event.sessionId === null) return;
    const interactionId = event.data.interactionId;
    if (typeof interactionId !== 'string') return;
    const context = await this.callbacks.contextOf(event.sessionId, tx);
    if (!context?.callbackUrl) return;
    const interaction = await this.interactions.byId(tx, interactionId);
    if (!interaction) return;
    await tx.recordTwilioCallback({
      accountId: context.session.accountId,
      sessionId: context.session.id,
      url: context.callbackUrl,
      params: interactionCallbackParams(context, interaction),
      receivedAt: event.receivedAt,
    });
  }

  /** The Twilio-format question for a Proxy Session whose intercept URL is its Service's; null for any other. */
  async request(question: InterceptQuestion): Promise<InterceptRequest | null> {
    const session = question.data.session as { id?: unknown } | undefined;
    if (typeof session?.id !== 'string') return null;
    const context = await this.callbacks.contextOf(session.id);
    if (!context || context.carrierInterceptUrl !== question.url) return null;
    const params = interceptParams(context, question.data.interaction as InterceptedInteraction);
    const [secret] = await this.secrets.signingSecrets(question.accountId);
    return { url: question.url, ...twilioSignedForm(question.url, params, secret, question.id) };
  }

  private async outOfSession(event: SessionEventInput, tx: FollowingTransaction): Promise<void> {
    const data = event.data as {
      channel: Channel;
      from: string;
      proxyNumber: string;
      provider: string;
      text?: string;
      sessionId: string | null;
    };
    const service = await this.callbacks.serviceOfNumber(tx, data.provider, data.proxyNumber);
    if (!service?.outOfSessionCallbackUrl || service.accountId !== event.accountId) return;
    // The Session only when it is one of this API's (a broker session of the account's own API may use the number too).
    const session = data.sessionId ? await this.callbacks.contextOf(data.sessionId, tx) : null;
    await tx.recordTwilioCallback({
      accountId: service.accountId,
      sessionId: session?.session.id ?? null,
      url: service.outOfSessionCallbackUrl,
      params: outOfSessionParams(service.accountId, service.serviceId, { ...data, sessionId: session?.session.id ?? null }),
      receivedAt: event.receivedAt,
    });
  }
}
