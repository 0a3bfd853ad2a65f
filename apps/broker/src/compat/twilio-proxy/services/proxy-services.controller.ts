import { Body, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { Caller, TwilioProxyController, type CompatCaller } from '../http/twilio-proxy-controller';
import { pageAnswer, pageRequest } from '../http/twilio-page';
import { TwilioParams } from '../http/twilio-params';
import { ProxyServices } from './proxy-services';
import { serviceResource } from './service.resource';

/** Twilio Proxy's Services (`/v1/Services`). */
@TwilioProxyController('Services')
export class ProxyServicesController {
  constructor(private readonly services: ProxyServices) {}

  @Post()
  @HttpCode(201)
  async create(@Caller() caller: CompatCaller, @Body() body: unknown) {
    return serviceResource(caller.base, await this.services.create(caller.accountId, TwilioParams.of(body)));
  }

  @Get()
  async list(@Caller() caller: CompatCaller, @Query() query: unknown) {
    const page = pageRequest(query);
    const rows = await this.services.list(caller.accountId, page);
    return pageAnswer(
      'services',
      `${caller.base}/v1/Services`,
      page,
      rows,
      (s) => ({ at: s.createdAt, id: s.id }),
      (s) => serviceResource(caller.base, s),
    );
  }

  @Get(':sid')
  async fetch(@Caller() caller: CompatCaller, @Param('sid') sid: string) {
    return serviceResource(caller.base, await this.services.get(caller.accountId, sid));
  }

  @Post(':sid')
  @HttpCode(200)
  async update(@Caller() caller: CompatCaller, @Param('sid') sid: string, @Body() body: unknown) {
    return serviceResource(caller.base, await this.services.update(caller.accountId, sid, TwilioParams.of(body)));
  }

  @Delete(':sid')
  @HttpCode(204)
  async remove(@Caller() caller: CompatCaller, @Param('sid') sid: string): Promise<void> {
    await this.services.delete(caller.accountId, sid);
  }
}
