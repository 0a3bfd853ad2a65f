import { Module } from '@nestjs/common';
import { ListenClient } from '../database/listen-client';
import { DestinationCache } from './destination-cache';
import { DestinationPolicy } from './destination-policy';
import { DestinationRepository } from './destination.repository';
import { ParticipantNumbers } from './participant-numbers';

/**
 * The toll-fraud guard and its memory: the sessions check participants against it, and the admin
 * route that changes an account's destinations waits for this replica's memory to hold the change.
 */
@Module({
  providers: [
    DestinationPolicy,
    ParticipantNumbers,
    DestinationRepository,
    {
      provide: DestinationCache,
      useFactory: (r: DestinationRepository, l: ListenClient) => new DestinationCache(r, l),
      inject: [DestinationRepository, ListenClient],
    },
  ],
  exports: [DestinationPolicy, DestinationCache, ParticipantNumbers],
})
export class DestinationsModule {}
