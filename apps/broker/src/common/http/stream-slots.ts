import { Inject, Injectable } from '@nestjs/common';
import { BROKER_CONFIG, type BrokerConfig } from '../../config';
import { BrokerMetrics } from '../../metrics/broker-metrics';
import { ProblemException } from '../problem';

/**
 * Open Server-Sent Event streams, counted per client address and in total on this replica: each
 * holds a socket and a subscription for as long as the client wants, so both counts are capped
 * (SSE_MAX_STREAMS_PER_CLIENT → 429, SSE_MAX_STREAMS → 503).
 */
@Injectable()
export class StreamSlots {
  private readonly perClient = new Map<string, number>();
  private total = 0;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly metrics: BrokerMetrics,
  ) {
    metrics.limits.set({ limit: 'sse_max_streams' }, config.http.maxStreams);
    metrics.limits.set({ limit: 'sse_max_streams_per_client' }, config.http.maxStreamsPerClient);
    metrics.limits.set({ limit: 'http_headers_timeout_ms' }, config.http.headersTimeoutMs);
    metrics.limits.set({ limit: 'http_request_timeout_ms' }, config.http.requestTimeoutMs);
  }

  /** Takes a slot for `client` or throws the problem that says which cap is reached; call the returned function once to give it back. */
  acquire(client: string): () => void {
    const held = this.perClient.get(client) ?? 0;
    if (held >= this.config.http.maxStreamsPerClient) {
      this.metrics.limitRefusals.inc({ limit: 'sse_max_streams_per_client' });
      throw new ProblemException({
        status: 429,
        slug: 'too-many-streams',
        title: 'Too many streams',
        detail: `This address already has ${held} open streams, the most allowed (SSE_MAX_STREAMS_PER_CLIENT). Close one first.`,
      });
    }
    if (this.total >= this.config.http.maxStreams) {
      this.metrics.limitRefusals.inc({ limit: 'sse_max_streams' });
      throw new ProblemException({
        status: 503,
        slug: 'stream-capacity-reached',
        title: 'Stream capacity reached',
        detail: `This replica serves at most ${this.config.http.maxStreams} open streams (SSE_MAX_STREAMS). Retry shortly.`,
      });
    }
    this.perClient.set(client, held + 1);
    this.total += 1;
    this.metrics.streamsOpen.set(this.total);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left > 0) this.perClient.set(client, left);
      else this.perClient.delete(client);
      this.total -= 1;
      this.metrics.streamsOpen.set(this.total);
    };
  }
}
