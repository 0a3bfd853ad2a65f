import { Body, Controller, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { isInvalidWebhookError, type CpaasProvider } from '@app/cpaas';
import type { RawBodyRequest } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ProblemException, ValidationProblem } from '../common/problem';
import { ProviderRegistry } from '../providers/provider-registry';
import { RelayService } from './relay.service';

/**
 * The webhooks providers call: inbound SMS and calls to our proxy numbers, and status updates.
 * Each is signature-verified over the exact bytes received; an unverified one is refused with 401
 * and nothing is relayed.
 */
@ApiExcludeController()
@Controller('v1/providers/:name')
export class InboundController {
  constructor(
    private readonly registry: ProviderRegistry,
    private readonly relay: RelayService,
  ) {}

  @Post('inbound/sms')
  @HttpCode(200)
  sms(@Param('name') name: string, @Req() req: RawBodyRequest<Request>, @Body() body: unknown, @Res() res: Response): Promise<void> {
    return this.inbound(name, 'sms', req, body, res);
  }

  @Post('inbound/voice')
  @HttpCode(200)
  voice(@Param('name') name: string, @Req() req: RawBodyRequest<Request>, @Body() body: unknown, @Res() res: Response): Promise<void> {
    return this.inbound(name, 'voice', req, body, res);
  }

  @Post('status')
  @HttpCode(200)
  async status(@Param('name') name: string, @Req() req: RawBodyRequest<Request>, @Body() body: unknown): Promise<{ matched: boolean }> {
    const provider = this.verified(name, req);
    const event = parse(() => provider.parseStatus(body));
    return { matched: await this.relay.status(name, event) };
  }

  private async inbound(name: string, channel: 'sms' | 'voice', req: RawBodyRequest<Request>, body: unknown, res: Response): Promise<void> {
    const provider = this.verified(name, req);
    const event = parse(() => provider.parseInbound(channel, body));
    const answer = await this.relay.inbound(name, event);
    switch (answer.kind) {
      case 'json':
        res.status(answer.status).json(answer.body);
        return;
      case 'instruction':
        res.status(200).type(answer.instruction.contentType).send(answer.instruction.body);
        return;
      case 'no-session':
        throw new ProblemException(404, 'No active session', `${event.from} has no active session on ${event.to}.`, 'no-active-session');
    }
  }

  private verified(name: string, req: RawBodyRequest<Request>): CpaasProvider {
    if (!this.registry.has(name)) throw new ProblemException(404, 'Unknown provider', `No provider named "${name}".`, 'unknown-provider');
    const provider = this.registry.adapter(name);
    if (!req.rawBody || !provider.verifyWebhook({ headers: req.headers, rawBody: req.rawBody })) {
      throw new ProblemException(
        401,
        'Invalid webhook signature',
        'The webhook signature or timestamp did not verify.',
        'invalid-signature',
      );
    }
    return provider;
  }
}

function parse<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (isInvalidWebhookError(error)) throw new ValidationProblem([{ field: error.field ?? 'body', message: error.message }]);
    throw error;
  }
}
