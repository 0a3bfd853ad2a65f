import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { BrokerMetrics } from './broker-metrics';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** What Express leaves on a request that matched a route: the pattern it was registered with. */
type RoutedRequest = IncomingMessage & { route?: { path?: unknown } };

/**
 * Feeds `broker_http_requests_total` and `broker_http_request_duration_seconds` when each response ends
 * (or its connection closes). Labels stay bounded: the route is the matched pattern, never the path, so no
 * session id or number becomes a label; a method outside the standard ones is `OTHER`.
 */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: BrokerMetrics) {}

  use(req: RoutedRequest, res: ServerResponse, next: () => void): void {
    const started = performance.now();
    // Nest mounts middleware as a route of its own: still this one at the end, no handler's route matched.
    const mountedAs = req.route;
    res.once('close', () => {
      const pattern = req.route !== mountedAs ? req.route?.path : undefined;
      const route = typeof pattern === 'string' ? pattern : 'unmatched';
      const method = METHODS.has(req.method ?? '') ? req.method! : 'OTHER';
      this.metrics.httpRequests.inc({ route, method, status: String(res.statusCode) });
      // A stream's duration is how long a client watched it, not a latency.
      if (!String(res.getHeader('content-type') ?? '').startsWith('text/event-stream'))
        this.metrics.httpRequestDuration.observe({ route, method }, (performance.now() - started) / 1000);
    });
    next();
  }
}
