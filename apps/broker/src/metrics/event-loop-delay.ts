import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { BrokerMetrics } from './broker-metrics';

const TICK_MS = 100;

/**
 * Feeds `broker_event_loop_delay_seconds`: a 100 ms timer notes how late it fired. It measures the
 * real loop, so it reads the process clock, not the app's injected one; unref'd, it never keeps the
 * process alive.
 */
@Injectable()
export class EventLoopDelaySampler implements OnModuleInit, OnModuleDestroy {
  private timer?: NodeJS.Timeout;

  constructor(private readonly metrics: BrokerMetrics) {}

  onModuleInit(): void {
    let due = performance.now() + TICK_MS;
    this.timer = setInterval(() => {
      const now = performance.now();
      this.metrics.eventLoopDelay.observe(Math.max(0, now - due) / 1000);
      due = now + TICK_MS;
    }, TICK_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }
}
