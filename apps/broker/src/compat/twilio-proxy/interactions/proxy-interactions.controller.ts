import { Body, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { uuidOfTwilioSid } from '../../../common/twilio-sid';
import { MessagesService } from '../../../relay/messages.service';
import { MAX_MESSAGE_LENGTH } from '../../../relay/dto/send-message.dto';
import { TWILIO_CODES, TwilioApiError, invalidParameter, notFound } from '../http/twilio-error';
import { Caller, TwilioProxyController, type CompatCaller } from '../http/twilio-proxy-controller';
import { pageAnswer, pageRequest } from '../http/twilio-page';
import { TwilioParams } from '../http/twilio-params';
import type { ProxyService } from '../services/proxy-service.entity';
import { ProxyServices } from '../services/proxy-services';
import type { ProxySessionView } from '../sessions/proxy-session.repository';
import { ProxySessions } from '../sessions/proxy-sessions';
import { ProxyInteractionRepository } from './proxy-interaction.repository';
import { interactionResource, messageInteractionResource, type InteractionContext } from './interaction.resource';

/** Resolves the path's Service and Session, and what the resources of their interactions are written with. */
async function contextOf(
  services: ProxyServices,
  sessions: ProxySessions,
  caller: CompatCaller,
  serviceSid: string,
  sessionSid: string,
): Promise<{ service: ProxyService; view: ProxySessionView; context: InteractionContext }> {
  const service = await services.get(caller.accountId, serviceSid);
  const view = await sessions.get(service, sessionSid);
  return {
    service,
    view,
    context: { base: caller.base, session: view.session, participants: await sessions.participants(view.session.id, true) },
  };
}

/** Twilio Proxy's Interactions of a Session (`…/Sessions/{SessionSid}/Interactions`): what was relayed, newest first. */
@TwilioProxyController('Services/:serviceSid/Sessions/:sessionSid/Interactions')
export class ProxyInteractionsController {
  constructor(
    private readonly services: ProxyServices,
    private readonly sessions: ProxySessions,
    private readonly interactions: ProxyInteractionRepository,
  ) {}

  @Get()
  async list(
    @Caller() caller: CompatCaller,
    @Param('serviceSid') serviceSid: string,
    @Param('sessionSid') sessionSid: string,
    @Query() query: unknown,
  ) {
    const page = pageRequest(query);
    const { context } = await contextOf(this.services, this.sessions, caller, serviceSid, sessionSid);
    const rows = await this.interactions.page(context.session.id, page.size + 1, page.after);
    return pageAnswer(
      'interactions',
      `${context.base}/v1/Services/${serviceSid}/Sessions/${sessionSid}/Interactions`,
      page,
      rows,
      (i) => ({ at: i.createdAt, id: i.id }),
      (i) => interactionResource(context, i),
    );
  }

  @Get(':sid')
  async fetch(
    @Caller() caller: CompatCaller,
    @Param('serviceSid') serviceSid: string,
    @Param('sessionSid') sessionSid: string,
    @Param('sid') sid: string,
  ) {
    const { context } = await contextOf(this.services, this.sessions, caller, serviceSid, sessionSid);
    const id = uuidOfTwilioSid('KI', sid);
    const found = id ? await this.interactions.find(context.session.id, id) : null;
    if (!found) throw notFound(`/Interactions/${sid}`);
    return interactionResource(context, found);
  }

  /** Erases what it said (its text): the broker keeps who, when and what became of it. */
  @Delete(':sid')
  @HttpCode(204)
  async remove(
    @Caller() caller: CompatCaller,
    @Param('serviceSid') serviceSid: string,
    @Param('sessionSid') sessionSid: string,
    @Param('sid') sid: string,
  ): Promise<void> {
    const { context } = await contextOf(this.services, this.sessions, caller, serviceSid, sessionSid);
    const id = uuidOfTwilioSid('KI', sid);
    if (!id || !(await this.interactions.find(context.session.id, id))) throw notFound(`/Interactions/${sid}`);
    await this.interactions.eraseText(context.session.id, id);
  }
}

/** Twilio Proxy's MessageInteractions of a Participant: texts the app sends it from its proxy number. */
@TwilioProxyController('Services/:serviceSid/Sessions/:sessionSid/Participants/:participantSid/MessageInteractions')
export class ProxyMessageInteractionsController {
  constructor(
    private readonly services: ProxyServices,
    private readonly sessions: ProxySessions,
    private readonly interactions: ProxyInteractionRepository,
    private readonly messages: MessagesService,
  ) {}

  /** Twilio's description of this route answers 200, not 201. Sent (and retried) as the broker's own messages are. */
  @Post()
  @HttpCode(200)
  async create(
    @Caller() caller: CompatCaller,
    @Param('serviceSid') serviceSid: string,
    @Param('sessionSid') sessionSid: string,
    @Param('participantSid') participantSid: string,
    @Body() body: unknown,
  ) {
    const { view, context, participant } = await this.participantOf(caller, serviceSid, sessionSid, participantSid);
    const params = TwilioParams.of(body);
    if (params.list('MediaUrl').length > 0)
      throw invalidParameter('MediaUrl', 'media is not supported: the broker relays text messages (docs/twilio-proxy-migration.md).');
    const text = params.string('Body', { required: true, max: MAX_MESSAGE_LENGTH })!;
    if (participant.deletedAt)
      throw new TwilioApiError(400, TWILIO_CODES.sessionNotActive, 'The participant was removed from the Session.');
    if (view.carrier?.status === 'pending')
      throw new TwilioApiError(
        400,
        TWILIO_CODES.noPartner,
        'The Session has one participant: messages go through it once its second participant is added.',
      );
    const sent = await this.messages.send(caller.accountId, context.session.id, { to: participant.identifier, text });
    return messageInteractionResource(context, participant, (await this.interactions.find(context.session.id, sent.id))!);
  }

  @Get()
  async list(
    @Caller() caller: CompatCaller,
    @Param('serviceSid') serviceSid: string,
    @Param('sessionSid') sessionSid: string,
    @Param('participantSid') participantSid: string,
    @Query() query: unknown,
  ) {
    const page = pageRequest(query);
    const { context, participant } = await this.participantOf(caller, serviceSid, sessionSid, participantSid);
    const rows = await this.interactions.page(context.session.id, page.size + 1, page.after, participant.identifier);
    return pageAnswer(
      'message_interactions',
      `${context.base}/v1/Services/${serviceSid}/Sessions/${sessionSid}/Participants/${participantSid}/MessageInteractions`,
      page,
      rows,
      (i) => ({ at: i.createdAt, id: i.id }),
      (i) => messageInteractionResource(context, participant, i),
    );
  }

  @Get(':sid')
  async fetch(
    @Caller() caller: CompatCaller,
    @Param('serviceSid') serviceSid: string,
    @Param('sessionSid') sessionSid: string,
    @Param('participantSid') participantSid: string,
    @Param('sid') sid: string,
  ) {
    const { context, participant } = await this.participantOf(caller, serviceSid, sessionSid, participantSid);
    const id = uuidOfTwilioSid('KI', sid);
    const found = id ? await this.interactions.find(context.session.id, id) : null;
    if (!found || found.to !== participant.identifier || found.providerEventId !== null) throw notFound(`/MessageInteractions/${sid}`);
    return messageInteractionResource(context, participant, found);
  }

  private async participantOf(caller: CompatCaller, serviceSid: string, sessionSid: string, participantSid: string) {
    const { view, context } = await contextOf(this.services, this.sessions, caller, serviceSid, sessionSid);
    const id = uuidOfTwilioSid('KP', participantSid);
    const participant = context.participants.find((p) => p.id === id);
    if (!participant) throw notFound(`/Participants/${participantSid}`);
    return { view, context, participant };
  }
}
