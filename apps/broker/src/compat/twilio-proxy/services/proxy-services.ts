import { Inject, Injectable } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../../../common/clock';
import { ProblemException } from '../../../common/problem';
import { uuidOfTwilioSid } from '../../../common/twilio-sid';
import { CallbackUrlValidator } from '../../../notifications';
import { MAX_TTL_SECONDS } from '../../../sessions/dto/create-session.dto';
import { TWILIO_CODES, TwilioApiError, invalidParameter, notFound } from '../http/twilio-error';
import type { TwilioParams } from '../http/twilio-params';
import type { PageRequest } from '../http/twilio-page';
import { ProxySessions } from '../sessions/proxy-sessions';
import type { NumberSelectionBehavior, ProxyService } from './proxy-service.entity';
import { ProxyServiceRepository, type ServiceFields } from './proxy-service.repository';

const GEO_MATCH_LEVELS = ['area-code', 'overlay', 'radius', 'country'] as const;
const SELECTIONS: readonly NumberSelectionBehavior[] = ['prefer-sticky', 'avoid-sticky'];
/** Twilio's limit for a UniqueName. */
const MAX_UNIQUE_NAME = 191;

/** An account's Twilio Proxy Services: what the Services routes do. */
@Injectable()
export class ProxyServices {
  constructor(
    private readonly services: ProxyServiceRepository,
    private readonly sessions: ProxySessions,
    private readonly callbackUrls: CallbackUrlValidator,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async create(accountId: string, params: TwilioParams): Promise<ProxyService> {
    const fields: ServiceFields = {
      uniqueName: params.string('UniqueName', { required: true, max: MAX_UNIQUE_NAME })!,
      defaultTtl: 0,
      callbackUrl: null,
      interceptCallbackUrl: null,
      outOfSessionCallbackUrl: null,
      numberSelectionBehavior: 'prefer-sticky',
      geoMatchLevel: 'country',
      ...this.changes(params),
    };
    const created = await this.services.create(accountId, fields, new Date(this.clock.now()));
    if (created === 'name-taken') throw nameTaken(fields.uniqueName);
    return created;
  }

  /** By sid (`KS…`) or unique name; 404 in Twilio's words when the account has none. */
  async get(accountId: string, sidOrName: string): Promise<ProxyService> {
    const id = uuidOfTwilioSid('KS', sidOrName);
    const service = await this.services.find(accountId, id, id === null ? sidOrName : null);
    if (!service) throw notFound(`/Services/${sidOrName}`);
    return service;
  }

  list(accountId: string, page: PageRequest): Promise<ProxyService[]> {
    return this.services.page(accountId, page.size + 1, page.after);
  }

  async update(accountId: string, sidOrName: string, params: TwilioParams): Promise<ProxyService> {
    const service = await this.get(accountId, sidOrName);
    const changes: Partial<ServiceFields> = { ...this.changes(params) };
    const uniqueName = params.string('UniqueName', { max: MAX_UNIQUE_NAME });
    if (uniqueName !== undefined) {
      if (uniqueName.trim() === '') throw invalidParameter('UniqueName', 'UniqueName must not be empty.');
      changes.uniqueName = uniqueName;
    }
    const updated = await this.services.update(service, changes, new Date(this.clock.now()));
    if (updated === 'name-taken') throw nameTaken(uniqueName!);
    return updated;
  }

  /** Closes the Service's live Sessions (their participants' numbers are free again), then removes it. */
  async delete(accountId: string, sidOrName: string): Promise<void> {
    const service = await this.get(accountId, sidOrName);
    await this.sessions.closeAll(service);
    await this.services.delete(service.id);
  }

  /** The settings a create or an update gives; those left out are not in it. */
  private changes(params: TwilioParams): Partial<ServiceFields> {
    const changes: Partial<ServiceFields> = {};
    const ttl = params.integer('DefaultTtl', { min: 0, max: MAX_TTL_SECONDS });
    if (ttl !== undefined) changes.defaultTtl = ttl;
    const callbackUrl = this.url(params, 'CallbackUrl');
    if (callbackUrl !== undefined) changes.callbackUrl = callbackUrl;
    const interceptUrl = this.url(params, 'InterceptCallbackUrl');
    if (interceptUrl !== undefined) changes.interceptCallbackUrl = interceptUrl;
    const outOfSessionUrl = this.url(params, 'OutOfSessionCallbackUrl');
    if (outOfSessionUrl !== undefined) changes.outOfSessionCallbackUrl = outOfSessionUrl;
    const selection = params.oneOf('NumberSelectionBehavior', SELECTIONS);
    if (selection !== undefined) changes.numberSelectionBehavior = selection;
    const geo = params.oneOf('GeoMatchLevel', GEO_MATCH_LEVELS);
    if (geo !== undefined && geo !== 'country')
      throw invalidParameter(
        'GeoMatchLevel',
        `only country is supported: ${geo} matching needs North American numbering data the broker does not have (docs/twilio-proxy-migration.md).`,
      );
    if (params.has('ChatInstanceSid'))
      throw invalidParameter(
        'ChatInstanceSid',
        'Twilio Chat channels are not supported: the broker relays texts and calls (docs/twilio-proxy-migration.md).',
      );
    return changes;
  }

  /** A callback URL, with the broker's rules for where its webhooks may go (public addresses, ports). */
  private url(params: TwilioParams, name: string): string | null | undefined {
    const url = params.url(name);
    if (!url) return url;
    try {
      this.callbackUrls.assertAcceptable(url, name);
    } catch (error) {
      if (error instanceof ProblemException) throw invalidParameter(name, error.detail.replace(`${name}: `, ''));
      throw error;
    }
    return url;
  }
}

function nameTaken(uniqueName: string): TwilioApiError {
  return new TwilioApiError(
    409,
    TWILIO_CODES.nonUniqueServiceName,
    `Service UniqueName must be unique: ${JSON.stringify(uniqueName)} is taken.`,
  );
}
