import { Subscription, type SchedulerLike } from 'rxjs';

/** Where the notifications module reads the time: epoch milliseconds. Tests pass a clock they move by hand. */
export interface Clock {
  now(): number;
}

export const NOTIFICATIONS_CLOCK = Symbol('NOTIFICATIONS_CLOCK');

export const systemClock: Clock = { now: () => Date.now() };

/**
 * An RxJS scheduler that reads the clock and never fires. The endpoint breakers live only while their
 * endpoint is being worked on and are rebuilt from the database after, so their timed transitions are
 * evaluated when asked (`admit()` honours `retryAt` itself), never by a timer that could outlive the app.
 */
export function clockScheduler(clock: Clock): SchedulerLike {
  return { now: () => clock.now(), schedule: () => new Subscription() };
}
