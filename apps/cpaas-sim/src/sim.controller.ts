import { Controller, Get } from '@nestjs/common';

@Controller('_sim')
export class SimController {
  @Get('health')
  health(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
