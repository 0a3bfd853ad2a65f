import { Controller, Get, Param, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentPrincipal, type Principal } from '../accounts';
import { CursorPageQueryDto } from '../common/pagination/cursor-page-query.dto';
import { sessionIdPipe as sessionId } from '../sessions/session-id.pipe';
import { InteractionListDto } from './dto/interaction.dto';
import { SessionInteractions } from './session-interactions';

/** GET /v1/sessions/:id/interactions: a session's relayed calls and messages, read where they are recorded. */
@ApiTags('sessions')
@ApiBearerAuth('api-key')
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions')
export class SessionInteractionsController {
  constructor(private readonly pages: SessionInteractions) {}

  @Get(':id/interactions')
  @ApiOperation({ summary: 'Calls and messages relayed through the session.' })
  @ApiOkResponse({ type: InteractionListDto })
  async interactions(
    @CurrentPrincipal() principal: Principal,
    @Param('id', sessionId) id: string,
    @Query() query: CursorPageQueryDto,
  ): Promise<InteractionListDto> {
    return this.pages.page(principal.accountId, id, query);
  }
}
