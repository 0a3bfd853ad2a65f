import { AdvisoryLocks } from '../database/exclusive';
import { Module } from '@nestjs/common';
import { JobRunner } from './job-runner';

@Module({ providers: [JobRunner, AdvisoryLocks], exports: [JobRunner] })
export class JobsModule {}
