import { Body, Controller, Delete, Get, Param, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ProviderApi } from './provider-api.service';

/** What a simulated provider offers the broker's `sim` adapter (libs/cpaas). */
@Controller('providers/:name/v1')
export class ProviderApiController {
  constructor(private readonly api: ProviderApi) {}

  @Post('bindings')
  bind(@Param('name') name: string, @Body() body: unknown, @Res() response: Response): Promise<void> {
    return this.api.handle(name, 'bind', { body }, response);
  }

  @Delete('bindings/:bindingId')
  unbind(
    @Param('name') name: string,
    @Param('bindingId') bindingId: string,
    @Body() body: unknown,
    @Res() response: Response,
  ): Promise<void> {
    return this.api.handle(name, 'unbind', { body, bindingId }, response);
  }

  @Post('messages')
  sendSms(@Param('name') name: string, @Body() body: unknown, @Res() response: Response): Promise<void> {
    return this.api.handle(name, 'sms', { body }, response);
  }

  @Post('calls')
  placeCall(@Param('name') name: string, @Body() body: unknown, @Res() response: Response): Promise<void> {
    return this.api.handle(name, 'call', { body }, response);
  }

  @Get('health')
  health(@Param('name') name: string, @Res() response: Response): Promise<void> {
    return this.api.handle(name, 'health', { body: undefined }, response);
  }
}
