/** A clock the test moves by hand. */
export class ManualClock {
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
