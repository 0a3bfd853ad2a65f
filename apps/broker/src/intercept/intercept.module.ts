import { Module } from '@nestjs/common';
import { NotificationsModule } from '../notifications';
import { InterceptClient } from './intercept-client';
import { InterceptController } from './intercept.controller';
import { InterceptUrlRepository } from './intercept-url.repository';

/** The intercept (docs/design.md#intercept): the account's URL, and the signed question asked before each relay and bridge. */
@Module({
  imports: [NotificationsModule],
  providers: [InterceptClient, InterceptUrlRepository],
  controllers: [InterceptController],
  exports: [InterceptClient],
})
export class InterceptModule {}
