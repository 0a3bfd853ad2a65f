import { Module } from '@nestjs/common';
import { NumbersAdminController } from './numbers-admin.controller';
import { ProxyNumberRepository } from './proxy-number.repository';
import { ProxyNumbersService } from './proxy-numbers.service';

@Module({
  providers: [ProxyNumbersService, ProxyNumberRepository],
  controllers: [NumbersAdminController],
  exports: [ProxyNumbersService, ProxyNumberRepository],
})
export class NumbersModule {}
