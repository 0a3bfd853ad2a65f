import { Module } from '@nestjs/common';
import { IdempotencyRepository } from './idempotency.repository';
import { IdempotencyService } from './idempotency.service';
import { IdempotentAnswers } from './idempotent-answers';

@Module({
  providers: [IdempotencyService, IdempotencyRepository, IdempotentAnswers],
  exports: [IdempotencyService, IdempotentAnswers],
})
export class IdempotencyModule {}
