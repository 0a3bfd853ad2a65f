import { Body, Controller, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentPrincipal, type Principal } from '../accounts';
import { Idempotent, IdempotencyKey } from '../idempotency/idempotency.interceptor';
import { InteractionDto } from './dto/interaction.dto';
import { SendMessageDto } from './dto/send-message.dto';
import { MessagesService } from './messages.service';
import { sessionIdPipe as sessionId } from '../sessions/session-id.pipe';

@ApiTags('sessions')
@ApiBearerAuth('api-key')
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions')
export class MessagesController {
  constructor(private readonly messages: MessagesService) {}

  @Post(':id/messages')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Send a text from the proxy number to one participant; durable and retried like a relay (message.relayed / message.failed).',
  })
  @Idempotent({
    // The key is bound to the session as well as the body: the same text into another session is another request.
    boundTo: ({ params, body }) => ({ message: { sessionId: params.id as string, to: body?.to, text: body?.text } }),
    recoverFrom: MessagesService,
    recover: (messages, { accountId, key, request }) => messages.sentWith(accountId, request.params.id as string, key),
  })
  @ApiAcceptedResponse({ type: InteractionDto })
  send(
    @CurrentPrincipal() principal: Principal,
    @Param('id', sessionId) id: string,
    @Body() body: SendMessageDto,
    @IdempotencyKey() key: string | null,
  ): Promise<InteractionDto> {
    return this.messages.send(principal.accountId, id, body, key);
  }
}
