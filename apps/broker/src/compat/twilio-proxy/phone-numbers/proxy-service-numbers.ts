import { Inject, Injectable } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../../../common/clock';
import { uuidOfTwilioSid } from '../../../common/twilio-sid';
import { E164 } from '../../../numbers/dto/proxy-number.dto';
import { TWILIO_CODES, TwilioApiError, invalidParameter, notFound } from '../http/twilio-error';
import type { PageRequest } from '../http/twilio-page';
import type { TwilioParams } from '../http/twilio-params';
import type { ProxyService } from '../services/proxy-service.entity';
import { ProxyServiceNumberRepository, type AddRefusal, type ServiceNumberView } from './proxy-service-number.repository';

/**
 * A Service's PhoneNumbers: pool numbers an operator dedicated to the account (`PUT /v1/admin/numbers/:id/account`,
 * `broker numbers dedicate`), one Service each. The account cannot take numbers of the shared pool: they are
 * every account's.
 */
@Injectable()
export class ProxyServiceNumbers {
  constructor(
    private readonly numbers: ProxyServiceNumberRepository,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  async add(service: ProxyService, params: TwilioParams): Promise<ServiceNumberView> {
    const sid = params.string('Sid');
    const phoneNumber = params.string('PhoneNumber');
    const isReserved = params.boolean('IsReserved') ?? false;
    let number: { id: string } | { e164: string };
    if (sid !== undefined) {
      const id = uuidOfTwilioSid('PN', sid);
      if (!id) throw invalidParameter('Sid', 'Sid must be a phone number sid (PN followed by 32 hex digits).');
      number = { id };
    } else if (phoneNumber !== undefined) {
      if (!E164.test(phoneNumber)) throw invalidParameter('PhoneNumber', 'PhoneNumber must be an E.164 number, like +14155551234.');
      number = { e164: phoneNumber };
    } else {
      throw invalidParameter('Sid', 'Sid or PhoneNumber is required.');
    }
    const now = new Date(this.clock.now());
    const result = await this.numbers.add(service.id, service.accountId, number, isReserved, now);
    if ('refused' in result) throw refusal(result.refused, sid ?? phoneNumber!);
    return (await this.numbers.find(service.id, { id: result.added }, now))!;
  }

  async get(service: ProxyService, sidOrNumber: string): Promise<ServiceNumberView> {
    const id = uuidOfTwilioSid('PN', sidOrNumber);
    const found = await this.numbers.find(service.id, id ? { id } : { e164: sidOrNumber }, new Date(this.clock.now()));
    if (!found) throw notFound(`/Services/${sidOrNumber}/PhoneNumbers/${sidOrNumber}`);
    return found;
  }

  list(service: ProxyService, page: PageRequest): Promise<ServiceNumberView[]> {
    return this.numbers.page(service.id, new Date(this.clock.now()), page.size + 1, page.after);
  }

  async update(service: ProxyService, sidOrNumber: string, params: TwilioParams): Promise<ServiceNumberView> {
    const number = await this.get(service, sidOrNumber);
    const isReserved = params.boolean('IsReserved');
    if (isReserved === undefined) return number;
    const now = new Date(this.clock.now());
    await this.numbers.setReserved(service.id, number.proxyNumberId, isReserved, now);
    return (await this.numbers.find(service.id, { id: number.proxyNumberId }, now))!;
  }

  async remove(service: ProxyService, sidOrNumber: string): Promise<void> {
    const number = await this.get(service, sidOrNumber);
    await this.numbers.remove(service.id, number.proxyNumberId);
  }
}

function refusal(why: AddRefusal, given: string): TwilioApiError {
  switch (why) {
    case 'unknown':
      return new TwilioApiError(
        404,
        TWILIO_CODES.notFound,
        `The requested resource ${given} was not found: the broker's pool holds no such number.`,
      );
    case 'ambiguous':
      return invalidParameter('PhoneNumber', `${given} is held on more than one provider; give its Sid instead.`);
    case 'not-dedicated':
      return new TwilioApiError(
        400,
        TWILIO_CODES.proxyIdentifierNotOwned,
        `${given} is not dedicated to this account; an operator dedicates pool numbers to an account (PUT /v1/admin/numbers/:id/account).`,
      );
    case 'in-a-service':
      return invalidParameter('Sid', `${given} is already in a Service; a number is in one Service at a time.`);
  }
}
