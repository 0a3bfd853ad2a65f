import { Module } from '@nestjs/common';
import type { Clock } from '../notifications/clock';
import { IDEMPOTENCY_CLOCK, IdempotencyService } from './idempotency.service';

@Module({
  providers: [{ provide: IDEMPOTENCY_CLOCK, useFactory: (): Clock => ({ now: () => Date.now() }) }, IdempotencyService],
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
