import { Injectable } from '@nestjs/common';
import { AdvisoryLocks } from '../database/exclusive';
import { IntervalJob, type IntervalJobOptions } from './interval-job';

/** Makes the broker's interval jobs; a feature starts its job at bootstrap and stops it at shutdown. */
@Injectable()
export class JobRunner {
  constructor(private readonly locks: AdvisoryLocks) {}

  /** A job whose passes run on one replica at a time: the one that gets the advisory lock `lockKey` (JOB_LOCKS) for the pass. */
  exclusive(lockKey: number, options: Omit<IntervalJobOptions, 'gate'>): IntervalJob {
    return new IntervalJob({ ...options, gate: (pass) => this.locks.runExclusive(lockKey, pass) });
  }

  /** A job with the gate it brings (the leader's, say); without one, every replica runs every pass. */
  job(options: IntervalJobOptions): IntervalJob {
    return new IntervalJob(options);
  }
}
