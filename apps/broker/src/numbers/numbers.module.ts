import { Module } from '@nestjs/common';
import { NumbersAdminController } from './numbers-admin.controller';
import { ProxyNumbersService } from './proxy-numbers.service';

@Module({ providers: [ProxyNumbersService], controllers: [NumbersAdminController], exports: [ProxyNumbersService] })
export class NumbersModule {}
