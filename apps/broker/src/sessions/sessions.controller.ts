import { Body, Controller, Delete, Get, Headers, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiKeyGuard, CurrentPrincipal, type Principal } from '../accounts';
import { IdempotencyService } from '../idempotency/idempotency.service';
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
    private readonly idempotency: IdempotencyService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Create a session: a proxy number for two participants, on the first healthy provider.' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Same key and body within 24 h replays the first answer.' })
  @ApiCreatedResponse({ type: SessionDto })
  create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: CreateSessionDto,
    @Headers('idempotency-key') key: string | undefined,
    @Res({ passthrough: true }) response: Response,
    @RequestId() requestId: string | undefined,
  ): Promise<SessionDto> {
    if (key === undefined) return this.sessions.create(principal.accountId, body, null, requestId);
    return this.idempotency.run(
      principal.accountId,
      key,
      body,
      response,
      () => this.sessions.create(principal.accountId, body, key, requestId),
      () => this.sessions.takeOver(principal.accountId, key, requestId),
    );
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
