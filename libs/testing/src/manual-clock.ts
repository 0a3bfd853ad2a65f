import type { Clock } from '@app/clock';

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(private time: number) {}
  now(): number {
    return this.time;
  }
  set(time: number): void {
    this.time = time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}
