import { Body, Delete, Get, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../../../common/clock';
import { uuidOfTwilioSid } from '../../../common/twilio-sid';
import { notFound } from '../http/twilio-error';
import { pageAnswer, pageRequest } from '../http/twilio-page';
import { TwilioParams } from '../http/twilio-params';
import { Caller, TwilioProxyController, type CompatCaller } from '../http/twilio-proxy-controller';
import { ProxyServices } from '../services/proxy-services';
import { ProxySessions } from './proxy-sessions';
import { participantResource, sessionResource } from './session.resource';

/** Twilio Proxy's Sessions of a Service (`/v1/Services/{ServiceSid}/Sessions`). */
@TwilioProxyController('Services/:serviceSid/Sessions')
export class ProxySessionsController {
  constructor(
    private readonly services: ProxyServices,
    private readonly sessions: ProxySessions,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Post()
  @HttpCode(201)
  async create(@Caller() caller: CompatCaller, @Param('serviceSid') serviceSid: string, @Body() body: unknown) {
    const service = await this.services.get(caller.accountId, serviceSid);
    return sessionResource(caller.base, await this.sessions.create(service, TwilioParams.of(body)), this.now());
  }

  @Get()
  async list(@Caller() caller: CompatCaller, @Param('serviceSid') serviceSid: string, @Query() query: unknown) {
    const page = pageRequest(query);
    const service = await this.services.get(caller.accountId, serviceSid);
    const now = this.now();
    const rows = await this.sessions.list(service, page);
    return pageAnswer(
      'sessions',
      `${caller.base}/v1/Services/${serviceSid}/Sessions`,
      page,
      rows,
      (v) => ({ at: v.session.createdAt, id: v.session.id }),
      (v) => sessionResource(caller.base, v, now),
    );
  }

  @Get(':sid')
  async fetch(@Caller() caller: CompatCaller, @Param('serviceSid') serviceSid: string, @Param('sid') sid: string) {
    const service = await this.services.get(caller.accountId, serviceSid);
    return sessionResource(caller.base, await this.sessions.get(service, sid), this.now());
  }

  @Post(':sid')
  @HttpCode(200)
  async update(@Caller() caller: CompatCaller, @Param('serviceSid') serviceSid: string, @Param('sid') sid: string, @Body() body: unknown) {
    const service = await this.services.get(caller.accountId, serviceSid);
    return sessionResource(caller.base, await this.sessions.update(service, sid, TwilioParams.of(body)), this.now());
  }

  @Delete(':sid')
  @HttpCode(204)
  async remove(@Caller() caller: CompatCaller, @Param('serviceSid') serviceSid: string, @Param('sid') sid: string): Promise<void> {
    const service = await this.services.get(caller.accountId, serviceSid);
    await this.sessions.delete(service, (await this.sessions.get(service, sid)).session.id);
  }

  private now(): Date {
    return new Date(this.clock.now());
  }
}

/** Twilio Proxy's Participants of a Session (`…/Sessions/{SessionSid}/Participants`). */
@TwilioProxyController('Services/:serviceSid/Sessions/:sessionSid/Participants')
export class ProxyParticipantsController {
  constructor(
    private readonly services: ProxyServices,
    private readonly sessions: ProxySessions,
  ) {}

  @Post()
  @HttpCode(201)
  async create(
    @Caller() caller: CompatCaller,
    @Param('serviceSid') serviceSid: string,
    @Param('sessionSid') sessionSid: string,
    @Body() body: unknown,
  ) {
    const service = await this.services.get(caller.accountId, serviceSid);
    const params = TwilioParams.of(body);
    const participant = await this.sessions.addParticipant(service, sessionSid, {
      identifier: params.string('Identifier', { required: true, max: 191 })!,
      friendlyName: params.string('FriendlyName'),
      proxyIdentifier: params.string('ProxyIdentifier'),
      proxyIdentifierSid: params.string('ProxyIdentifierSid'),
    });
    return participantResource(caller.base, await this.sessions.view(service, participant.sessionId), participant);
  }

  @Get()
  async list(
    @Caller() caller: CompatCaller,
    @Param('serviceSid') serviceSid: string,
    @Param('sessionSid') sessionSid: string,
    @Query() query: unknown,
  ) {
    const page = pageRequest(query);
    const view = await this.sessions.get(await this.services.get(caller.accountId, serviceSid), sessionSid);
    // At most two, first first: the page is cut from them.
    const after = page.after;
    const rows = (await this.sessions.participants(view.session.id)).filter(
      (p) => !after || p.createdAt > after.at || (p.createdAt.getTime() === after.at.getTime() && p.id > after.id),
    );
    return pageAnswer(
      'participants',
      `${caller.base}/v1/Services/${serviceSid}/Sessions/${sessionSid}/Participants`,
      page,
      rows.slice(0, page.size + 1),
      (p) => ({ at: p.createdAt, id: p.id }),
      (p) => participantResource(caller.base, view, p),
    );
  }

  @Get(':sid')
  async fetch(
    @Caller() caller: CompatCaller,
    @Param('serviceSid') serviceSid: string,
    @Param('sessionSid') sessionSid: string,
    @Param('sid') sid: string,
  ) {
    const view = await this.sessions.get(await this.services.get(caller.accountId, serviceSid), sessionSid);
    const id = uuidOfTwilioSid('KP', sid);
    const participant = (await this.sessions.participants(view.session.id)).find((p) => p.id === id);
    if (!participant) throw notFound(`/Participants/${sid}`);
    return participantResource(caller.base, view, participant);
  }

  /** Twilio's description of this route answers 200 (no body), not 204. */
  @Delete(':sid')
  @HttpCode(200)
  async remove(
    @Caller() caller: CompatCaller,
    @Param('serviceSid') serviceSid: string,
    @Param('sessionSid') sessionSid: string,
    @Param('sid') sid: string,
  ): Promise<void> {
    await this.sessions.removeParticipant(await this.services.get(caller.accountId, serviceSid), sessionSid, sid);
  }
}
