import { Body, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { Caller, TwilioProxyController, type CompatCaller } from '../http/twilio-proxy-controller';
import { pageAnswer, pageRequest } from '../http/twilio-page';
import { TwilioParams } from '../http/twilio-params';
import { ProxyServices } from '../services/proxy-services';
import { phoneNumberResource } from './phone-number.resource';
import { ProxyServiceNumbers } from './proxy-service-numbers';

/** Twilio Proxy's PhoneNumbers of a Service (`/v1/Services/{ServiceSid}/PhoneNumbers`). */
@TwilioProxyController('Services/:serviceSid/PhoneNumbers')
export class ProxyServiceNumbersController {
  constructor(
    private readonly services: ProxyServices,
    private readonly numbers: ProxyServiceNumbers,
  ) {}

  @Post()
  @HttpCode(201)
  async create(@Caller() caller: CompatCaller, @Param('serviceSid') serviceSid: string, @Body() body: unknown) {
    const service = await this.services.get(caller.accountId, serviceSid);
    return phoneNumberResource(caller.base, await this.numbers.add(service, TwilioParams.of(body)));
  }

  @Get()
  async list(@Caller() caller: CompatCaller, @Param('serviceSid') serviceSid: string, @Query() query: unknown) {
    const page = pageRequest(query);
    const service = await this.services.get(caller.accountId, serviceSid);
    const rows = await this.numbers.list(service, page);
    return pageAnswer(
      'phone_numbers',
      `${caller.base}/v1/Services/${serviceSid}/PhoneNumbers`,
      page,
      rows,
      (n) => ({ at: n.createdAt, id: n.proxyNumberId }),
      (n) => phoneNumberResource(caller.base, n),
    );
  }

  @Get(':sid')
  async fetch(@Caller() caller: CompatCaller, @Param('serviceSid') serviceSid: string, @Param('sid') sid: string) {
    const service = await this.services.get(caller.accountId, serviceSid);
    return phoneNumberResource(caller.base, await this.numbers.get(service, sid));
  }

  @Post(':sid')
  @HttpCode(200)
  async update(@Caller() caller: CompatCaller, @Param('serviceSid') serviceSid: string, @Param('sid') sid: string, @Body() body: unknown) {
    const service = await this.services.get(caller.accountId, serviceSid);
    return phoneNumberResource(caller.base, await this.numbers.update(service, sid, TwilioParams.of(body)));
  }

  @Delete(':sid')
  @HttpCode(204)
  async remove(@Caller() caller: CompatCaller, @Param('serviceSid') serviceSid: string, @Param('sid') sid: string): Promise<void> {
    await this.numbers.remove(await this.services.get(caller.accountId, serviceSid), sid);
  }
}
