import { Global, Module } from '@nestjs/common';
import type { Clock } from '@app/clock';

/** The app's one clock (`@Inject(CLOCK) clock: Clock`): sessions, relay, accounts, idempotency, webhooks. */
export const CLOCK = Symbol('CLOCK');

/**
 * Provided once for the whole app. A fresh object per app, not the shared `systemClock`: a test that
 * swaps `now` on one app's clock (`app.get(CLOCK)`) moves that app only.
 */
@Global()
@Module({
  providers: [{ provide: CLOCK, useFactory: (): Clock => ({ now: () => Date.now() }) }],
  exports: [CLOCK],
})
export class ClockModule {}
