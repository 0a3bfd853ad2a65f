import { Module } from '@nestjs/common';
import { JobsModule } from '../jobs/jobs.module';
import { MessageTextRetention } from './message-text-retention';
import { MessageTextRepository } from './message-text.repository';

/** What the broker keeps, and for how long (docs/operations.md#retention-of-message-bodies). */
@Module({
  imports: [JobsModule],
  providers: [MessageTextRetention, MessageTextRepository],
})
export class RetentionModule {}
