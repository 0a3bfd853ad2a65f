/**
 * Rate limits per API key: creates (every request that is not a read) and reads are
 * two token buckets per key, refilled continuously; an empty bucket is a 429 with Retry-After.
 * Wrong credentials (an unknown or revoked API key, a wrong admin token) take a token from a
 * bucket of the client address; while it is empty, that address's wrong credentials get 429 instead of
 * 401. Only failures are counted and refused: a valid key or token is never refused by this bucket.
 * Kept in this replica's memory, so N replicas allow N times the rate. (@nestjs/throttler counts
 * fixed windows, which lets a client send twice the limit across a window edge; a bucket does not.)
 */
import { Inject, Injectable } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { BrokerMetrics } from '../metrics/broker-metrics';

export interface BucketRule {
  /** Tokens added per second. */
  perSecond: number;
  /** Most tokens a bucket holds: the burst a client may send at once. */
  burst: number;
}

/** One bucket: `take()` answers 0 when a token was taken, else the milliseconds until one is there. */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly rule: BucketRule,
    now: number,
  ) {
    this.tokens = rule.burst;
    this.updatedAt = now;
  }

  take(now: number): number {
    const waitMs = this.wait(now);
    if (waitMs === 0) this.tokens -= 1;
    return waitMs;
  }

  /** Like take, without taking: 0 when a token is there, else the milliseconds until one is. */
  wait(now: number): number {
    // A clock stepped back (NTP, a test's clock put back) refills nothing rather than owing tokens.
    this.tokens = Math.min(this.rule.burst, this.tokens + (Math.max(0, now - this.updatedAt) / 1000) * this.rule.perSecond);
    this.updatedAt = now;
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.rule.perSecond) * 1000);
  }
}

type RateKind = 'creates' | 'reads';

/** Buckets beyond this many keys are dropped oldest first (a dropped bucket starts full again). */
const MAX_BUCKETS = 100_000;

@Injectable()
export class RateLimits {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly rules: Record<RateKind | 'authFailures', BucketRule>;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly metrics: BrokerMetrics,
  ) {
    this.rules = config.rateLimits;
    for (const kind of ['creates', 'reads'] as const) {
      metrics.limits.set({ limit: `rate_limit_${kind}_per_second` }, this.rules[kind].perSecond);
      metrics.limits.set({ limit: `rate_limit_${kind}_burst` }, this.rules[kind].burst);
    }
    metrics.limits.set({ limit: 'rate_limit_auth_failures_per_second' }, this.rules.authFailures.perSecond);
    metrics.limits.set({ limit: 'rate_limit_auth_failures_burst' }, this.rules.authFailures.burst);
  }

  /** 0 when the request may go ahead, else the milliseconds to wait. */
  take(apiKeyId: string, kind: RateKind): number {
    const now = this.clock.now();
    const waitMs = this.bucket(`${kind}:${apiKeyId}`, this.rules[kind], now).take(now);
    if (waitMs > 0) this.metrics.limitRefusals.inc({ limit: `rate_limit_${kind}` });
    return waitMs;
  }

  /**
   * A wrong API key or admin token from this client address: 0 while the address is within its budget (the
   * answer is a 401), else the milliseconds until it is again (the answer is a 429, counted as a refusal).
   */
  noteAuthFailure(address: string): number {
    const now = this.clock.now();
    const waitMs = this.bucket(`auth:${address}`, this.rules.authFailures, now).take(now);
    if (waitMs > 0) this.metrics.limitRefusals.inc({ limit: 'rate_limit_auth_failures' });
    return waitMs;
  }

  private bucket(id: string, rule: BucketRule, now: number): TokenBucket {
    let bucket = this.buckets.get(id);
    if (!bucket) {
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
      bucket = new TokenBucket(rule, now);
      this.buckets.set(id, bucket);
    }
    return bucket;
  }
}
