import type { WindowSnapshot } from './snapshot';

/**
 * Calls and failures over a sliding time window, kept in a fixed ring of time buckets: memory is two
 * arrays of `buckets` numbers whatever the call rate. A time t falls in bucket floor(t × buckets / windowMs);
 * at time `now` the window holds the buckets after floor(now × buckets / windowMs) − buckets. With
 * buckets = windowMs this is exactly (now − windowMs, now]; with fewer buckets an outcome leaves the
 * window up to one bucket width early. Time that goes backwards is counted in the newest bucket.
 */
export class SlidingWindow {
  private readonly calls: Float64Array;
  private readonly failures: Float64Array;
  /** Absolute index of the newest bucket; null while nothing was recorded. */
  private head: number | null = null;
  private headSlot = 0;
  /** (head + 1) × windowMs: a time t is still in the newest bucket while t × buckets < headLimit (exact in integers). */
  private headLimit = -Infinity;
  private callTotal = 0;
  private failureTotal = 0;

  constructor(
    readonly windowMs: number,
    readonly buckets: number,
  ) {
    this.calls = new Float64Array(buckets);
    this.failures = new Float64Array(buckets);
  }

  /** Calls in the window as of the last `advance` or `add`. */
  get callCount(): number {
    return this.callTotal;
  }

  get failureCount(): number {
    return this.failureTotal;
  }

  add(now: number, failed: boolean): void {
    // Hot path: still in the newest bucket, no division and no modulo.
    if (!(now * this.buckets < this.headLimit)) this.advance(now);
    const slot = this.headSlot;
    this.calls[slot] += 1;
    this.callTotal += 1;
    if (failed) {
      this.failures[slot] += 1;
      this.failureTotal += 1;
    }
  }

  /** Drops the buckets that slid out of the window by `now`. */
  advance(now: number): void {
    const index = Math.floor((now * this.buckets) / this.windowMs);
    const head = this.head;
    if (head !== null) {
      if (index <= head) return;
      if (index - head >= this.buckets) {
        this.clear();
      } else {
        for (let i = head + 1; i <= index; i++) {
          const slot = this.slot(i);
          this.callTotal -= this.calls[slot];
          this.failureTotal -= this.failures[slot];
          this.calls[slot] = 0;
          this.failures[slot] = 0;
        }
      }
    }
    this.setHead(index);
  }

  reset(): void {
    this.clear();
    this.head = null;
    this.headSlot = 0;
    this.headLimit = -Infinity;
  }

  toJSON(): WindowSnapshot {
    return {
      windowMs: this.windowMs,
      buckets: this.buckets,
      head: this.head,
      calls: Array.from(this.calls),
      failures: Array.from(this.failures),
    };
  }

  /** Restores a snapshot of a window with the same shape; returns false (and stays empty) otherwise. */
  restore(snapshot: WindowSnapshot | undefined): boolean {
    this.reset();
    if (
      snapshot === undefined ||
      snapshot.windowMs !== this.windowMs ||
      snapshot.buckets !== this.buckets ||
      !Array.isArray(snapshot.calls) ||
      !Array.isArray(snapshot.failures) ||
      snapshot.calls.length !== this.buckets ||
      snapshot.failures.length !== this.buckets ||
      (snapshot.head !== null && !Number.isInteger(snapshot.head))
    ) {
      return false;
    }
    this.calls.set(snapshot.calls);
    this.failures.set(snapshot.failures);
    this.callTotal = snapshot.calls.reduce((sum, n) => sum + n, 0);
    this.failureTotal = snapshot.failures.reduce((sum, n) => sum + n, 0);
    if (snapshot.head !== null) this.setHead(snapshot.head);
    return true;
  }

  private setHead(index: number): void {
    this.head = index;
    this.headSlot = this.slot(index);
    this.headLimit = (index + 1) * this.windowMs;
  }

  private clear(): void {
    this.calls.fill(0);
    this.failures.fill(0);
    this.callTotal = 0;
    this.failureTotal = 0;
  }

  private slot(index: number): number {
    const slot = index % this.buckets;
    return slot < 0 ? slot + this.buckets : slot;
  }
}
