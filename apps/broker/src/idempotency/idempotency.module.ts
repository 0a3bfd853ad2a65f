import { Module } from '@nestjs/common';
import type { Clock } from '../notifications/clock';
import { IdempotencyRepository } from './idempotency.repository';
import { IDEMPOTENCY_CLOCK, IdempotencyService } from './idempotency.service';

@Module({
  providers: [
    { provide: IDEMPOTENCY_CLOCK, useFactory: (): Clock => ({ now: () => Date.now() }) },
    IdempotencyService,
    IdempotencyRepository,
  ],
  exports: [IdempotencyService],
})
export class IdempotencyModule {}
