import { Controller, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { isInvalidWebhookError, type WebhookAnswer, type WebhookRequest, type WebhookRoute } from '@app/cpaas';
import type { RawBodyRequest } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ProblemException, ValidationProblem, unknownProvider } from '../common/problem';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import type { ProviderWebhooks } from '../providers/provider-adapters';
import { ProviderRegistry } from '../providers/provider-registry';
import { RelayService } from './relay.service';

/**
 * The webhooks providers call: inbound SMS and calls to our proxy numbers, and status updates.
 * Each is signature-verified by the provider's adapter over the exact bytes received and the URL
 * the provider called (`PUBLIC_URL` + path + query): no signature is 401, a wrong one 403, and in
 * both cases nothing is relayed. Answers are in the provider's own format (TwiML, the simulator's JSON).
 */
@ApiExcludeController()
@Controller('v1/providers/:name')
export class InboundController {
  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly registry: ProviderRegistry,
    private readonly relay: RelayService,
  ) {}

  @Post('inbound/sms')
  @HttpCode(200)
  sms(@Param('name') name: string, @Req() req: RawBodyRequest<Request>, @Res() res: Response): Promise<void> {
    return this.inbound(name, 'sms', req, res);
  }

  @Post('inbound/voice')
  @HttpCode(200)
  voice(@Param('name') name: string, @Req() req: RawBodyRequest<Request>, @Res() res: Response): Promise<void> {
    return this.inbound(name, 'voice', req, res);
  }

  @Post('status')
  @HttpCode(200)
  async status(@Param('name') name: string, @Req() req: RawBodyRequest<Request>, @Res() res: Response): Promise<void> {
    const { provider, webhook } = this.verified(name, 'status', req);
    await this.statusOf(name, provider, webhook, res);
  }

  private async statusOf(name: string, provider: ProviderWebhooks, webhook: WebhookRequest, res: Response): Promise<void> {
    const event = parse(() => provider.parseStatus(webhook));
    const matched = await this.relay.status(name, event);
    send(res, provider.statusAnswer({ matched }));
  }

  private async inbound(name: string, channel: 'sms' | 'voice', req: RawBodyRequest<Request>, res: Response): Promise<void> {
    const { provider, webhook } = this.verified(name, channel === 'sms' ? 'inbound/sms' : 'inbound/voice', req);
    // A vendor that posts a call's end (or every call event) to the voice URL: that one is a status.
    if (provider.webhookRoute?.(webhook) === 'status') return this.statusOf(name, provider, webhook, res);
    const event = parse(() => provider.parseInbound(channel, webhook));
    const answer = await this.relay.inbound(name, event);
    if (answer.kind === 'not-our-number')
      throw new ProblemException({
        status: 404,
        slug: 'unknown-proxy-number',
        title: 'Not a proxy number',
        detail: `${event.to} is not in ${name}'s proxy-number pool.`,
      });
    if (answer.kind === 'no-session')
      throw new ProblemException({
        status: 404,
        slug: 'no-active-session',
        title: 'No active session',
        detail: `${event.from} has no active session on ${event.to}.`,
      });
    if (answer.kind === 'rate-limited') {
      const seconds = Math.ceil(answer.retryAfterMs / 1000);
      res.setHeader('Retry-After', String(seconds));
      throw new ProblemException({
        status: 429,
        slug: 'rate-limited',
        title: 'Session relay rate reached',
        detail: `The session on ${event.to} relayed more than RATE_LIMIT_SESSION_RELAYS_BURST allows; not relayed (retry in ${seconds} s).`,
      });
    }
    send(res, answer.answer);
  }

  private verified(
    name: string,
    route: WebhookRoute,
    req: RawBodyRequest<Request>,
  ): { provider: ProviderWebhooks; webhook: WebhookRequest } {
    if (!this.registry.has(name)) throw unknownProvider(name);
    const provider = this.registry.webhooks(name);
    const webhook: WebhookRequest = {
      url: `${this.config.publicUrl ?? ownOrigin(req)}${req.originalUrl}`,
      method: req.method,
      route,
      headers: req.headers,
      rawBody: req.rawBody ?? Buffer.alloc(0),
    };
    const verification = provider.verifyWebhook(webhook);
    if (verification === 'missing')
      throw new ProblemException({
        status: 401,
        slug: 'missing-signature',
        title: 'Webhook signature missing',
        detail: 'The webhook carries no signature.',
      });
    if (verification !== 'valid')
      throw new ProblemException({
        status: 403,
        slug: 'invalid-signature',
        title: 'Invalid webhook signature',
        detail: 'The webhook signature or timestamp did not verify.',
      });
    return { provider, webhook };
  }
}

/** A Host header that is a host and a port, nothing else (no path, query or fragment to move the URL). */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The broker's origin as this request reached it, for a provider that calls it directly (the simulator).
 * The Host header is the sender's to choose: one that is not a plain host and port counts for nothing.
 */
function ownOrigin(req: Request): string {
  const host = req.get('host');
  return `${req.protocol}://${host !== undefined && HOST.test(host) ? host : 'localhost'}`;
}

function send(res: Response, answer: WebhookAnswer): void {
  res.status(answer.status).type(answer.contentType).send(answer.body);
}

function parse<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (isInvalidWebhookError(error)) throw new ValidationProblem([{ field: error.field ?? 'body', message: error.message }]);
    throw error;
  }
}
