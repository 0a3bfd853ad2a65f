/**
 * How fast one session relays: a token bucket per session (RATE_LIMIT_SESSION_RELAYS_*), taken by every
 * inbound text and call that would be relayed. A participant (or a script) that floods a proxy number gets
 * the burst through, then one relay per refill; the rest are neither relayed nor recorded, so one session
 * can neither run up the account's vendor bill nor grow its interactions without bound. Kept in this
 * replica's memory, as the other rate limits are (docs/security.md).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { Clock } from '@app/clock';
import { TokenBucket, type BucketRule } from '../accounts';
import { CLOCK } from '../common/clock';
import { BROKER_CONFIG, type BrokerConfig } from '../config';
import { BrokerMetrics } from '../metrics/broker-metrics';

/** Sessions whose buckets are kept at once; beyond it the oldest is dropped (and starts full again). */
const MAX_SESSIONS = 100_000;

@Injectable()
export class SessionRelayLimit {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly rule: BucketRule;

  constructor(
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly metrics: BrokerMetrics,
  ) {
    this.rule = config.rateLimits.sessionRelays;
    metrics.limits.set({ limit: 'rate_limit_session_relays_per_second' }, this.rule.perSecond);
    metrics.limits.set({ limit: 'rate_limit_session_relays_burst' }, this.rule.burst);
  }

  /** 0 when the session may relay one more now (a token is taken), else the milliseconds until it may (counted as a refusal). */
  take(sessionId: string): number {
    const now = this.clock.now();
    let bucket = this.buckets.get(sessionId);
    if (!bucket) {
      if (this.buckets.size >= MAX_SESSIONS) this.buckets.delete(this.buckets.keys().next().value!);
      bucket = new TokenBucket(this.rule, now);
      this.buckets.set(sessionId, bucket);
    }
    const waitMs = bucket.take(now);
    if (waitMs > 0) this.metrics.limitRefusals.inc({ limit: 'rate_limit_session_relays' });
    return waitMs;
  }
}
