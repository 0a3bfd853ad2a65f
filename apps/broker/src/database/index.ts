// The broker's database infrastructure: the LISTEN connection and the advisory locks of its scheduled jobs.
export { ListenClient } from './listen-client';
export { AdvisoryLocks, JOB_LOCKS, runExclusive } from './exclusive';
