/** Moves one running broker's provider-breaker time, so a test crosses a breaker duration without waiting. */
import type { SchedulerLike } from 'rxjs';
import { BREAKER_SCHEDULER } from '../../apps/broker/src/providers/provider-breakers';
import type { BrokerHarness } from './broker-harness';

/** From now on this broker's breakers read a time `ms` later than before (the offsets add up). */
export function advanceBreakerTime(broker: BrokerHarness, ms: number): void {
  const scheduler = broker.app.get<SchedulerLike>(BREAKER_SCHEDULER);
  const now = scheduler.now.bind(scheduler);
  (scheduler as { now: () => number }).now = () => now() + ms;
}
