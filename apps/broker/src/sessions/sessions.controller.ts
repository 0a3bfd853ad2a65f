import { Body, Controller, Delete, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiKeyGuard, CurrentPrincipal, type Principal } from '../accounts';
import { AcceptsIdempotencyKey, Idempotency, IdempotentAnswers, type IdempotentExchange } from '../idempotency/idempotent-answers';
import { RequestId } from '../logging/request-id';
import { CreateSessionDto } from './dto/create-session.dto';
import { ListSessionsQueryDto, SessionDto, SessionListDto } from './dto/session.dto';
import { SessionsService } from './sessions.service';
import { sessionIdPipe as sessionId } from './session-id.pipe';

@ApiTags('sessions')
@ApiBearerAuth('api-key')
@UseGuards(ApiKeyGuard)
@Controller('v1/sessions')
export class SessionsController {
  constructor(
    private readonly sessions: SessionsService,
    private readonly idempotent: IdempotentAnswers,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a session: a proxy number for two participants, on the first healthy provider.' })
  @AcceptsIdempotencyKey()
  @ApiCreatedResponse({ type: SessionDto })
  create(
    @CurrentPrincipal() { accountId }: Principal,
    @Body() body: CreateSessionDto,
    @Idempotency() idempotency: IdempotentExchange,
    @RequestId() requestId: string | undefined,
  ): Promise<SessionDto> {
    const route = { recover: (key: string) => this.sessions.takeOver(accountId, key, requestId) };
    return this.idempotent.answer(idempotency, accountId, route, () => this.sessions.create(accountId, body, idempotency.key, requestId));
  }

  @Get()
  @ApiOperation({ summary: 'List your sessions, newest first, a page at a time.' })
  @ApiOkResponse({ type: SessionListDto })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListSessionsQueryDto): Promise<SessionListDto> {
    return this.sessions.list(principal.accountId, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read a session.' })
  @ApiOkResponse({ type: SessionDto })
  get(@CurrentPrincipal() principal: Principal, @Param('id', sessionId) id: string): Promise<SessionDto> {
    return this.sessions.get(principal.accountId, id);
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Close a session and release its proxy number binding. Closing twice is harmless.' })
  @ApiOkResponse({ type: SessionDto })
  close(@CurrentPrincipal() principal: Principal, @Param('id', sessionId) id: string): Promise<SessionDto> {
    return this.sessions.close(principal.accountId, id);
  }
}
