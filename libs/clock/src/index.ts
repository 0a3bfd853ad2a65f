/**
 * The one clock: where the broker, the simulator and the provider adapters read the time, as epoch
 * milliseconds. An RxJS scheduler fits (`scheduler.now()`); a test passes a clock it moves by hand, so
 * every time rule is tested without waiting. No NestJS here: the broker provides it once, globally (CLOCK).
 */
export interface Clock {
  now(): number;
}

/** The wall clock. Each app gets its own object from the broker's ClockModule, so a test moves only its own. */
export const systemClock: Clock = { now: () => Date.now() };
