import { Module } from '@nestjs/common';
import { OpsController } from './ops.controller';

/** `/ops`: the live page of provider health for operators. */
@Module({ controllers: [OpsController] })
export class OpsModule {}
