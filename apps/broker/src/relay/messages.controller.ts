import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentPrincipal, type Principal } from '../accounts';
import { AcceptsIdempotencyKey, Idempotency, IdempotentAnswers, type IdempotentExchange } from '../idempotency/idempotent-answers';
import { InteractionDto } from './dto/interaction.dto';
import { SendMessageDto } from './dto/send-message.dto';
import { MessagesService } from './messages.service';
import { sessionIdPipe as sessionId } from '../sessions/session-id.pipe';

@ApiTags('sessions')
@ApiBearerAuth('api-key')
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions')
export class MessagesController {
  constructor(
    private readonly messages: MessagesService,
    private readonly idempotent: IdempotentAnswers,
  ) {}

  @Post(':id/messages')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a text from the proxy number to one participant; durable and retried like a relay (message.relayed / message.failed).',
  })
  @AcceptsIdempotencyKey()
  @ApiAcceptedResponse({ type: InteractionDto })
  send(
    @CurrentPrincipal() { accountId }: Principal,
    @Param('id', sessionId) id: string,
    @Body() body: SendMessageDto,
    @Idempotency() idempotency: IdempotentExchange,
  ): Promise<InteractionDto> {
    const route = {
      // The key is bound to the session as well as the body: the same text into another session is another request.
      boundTo: ({ params, body }: Request) => ({ message: { sessionId: params.id as string, to: body?.to, text: body?.text } }),
      recover: (key: string) => this.messages.sentWith(accountId, id, key),
    };
    return this.idempotent.answer(idempotency, accountId, route, () => this.messages.send(accountId, id, body, idempotency.key));
  }
}
