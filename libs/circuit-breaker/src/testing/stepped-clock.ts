import { VirtualTimeScheduler } from 'rxjs';

/**
 * Test helper: RxJS virtual time stepped by hand. `advanceTo(t)` runs the scheduled work due by t, in
 * due-time order, then leaves the clock at t; so "timers due at or before t run before what happens at t".
 */
export class SteppedClock extends VirtualTimeScheduler {
  advanceTo(t: number): void {
    if (t < this.frame) throw new RangeError(`SteppedClock cannot go back from ${this.frame} to ${t}`);
    this.maxFrames = t;
    this.flush();
    this.frame = t;
  }

  advanceBy(ms: number): void {
    this.advanceTo(this.frame + ms);
  }
}
