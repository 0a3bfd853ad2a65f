/**
 * Nest's Express adapter, for the broker and the simulator, with one change: the HTTP server builds
 * each request and response with Express's prototypes (`app.request`, `app.response`) already in place.
 *
 * Why: Express 5 changes the prototype of every request and response it handles
 * (`Object.setPrototypeOf(req, app.request)` in `app.handle`), and V8 keeps an object whose prototype
 * was changed, with everything it references, alive through scavenges until the next full
 * collection. So each request's whole graph (the request, the response, the request's child logger,
 * the router's closures, what the handler hung on them) was promoted to the old generation, and
 * the old generation filled up in every burst (measured under `--trace-gc-nvp`, one connection, one
 * request at a time: about 20 KB promoted per create and 8.7 KB per 404 before; about none after, as
 * Express's own call then changes nothing).
 *
 * Node's `http.createServer({ IncomingMessage, ServerResponse }, listener)` takes the two classes;
 * Nest's adapter does not pass options, so `initHttpServer` is Nest's own for the options these apps
 * use (`forceCloseConnections`), and Nest's unchanged for the others (HTTPS, `return503OnClosing`).
 */
import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express } from 'express';

export class PrototypedExpressAdapter extends ExpressAdapter {
  override initHttpServer(options: NestApplicationOptions): void {
    if (options.httpsOptions || options.return503OnClosing) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<Express>();
    this.httpServer = createServer(
      { IncomingMessage: withPrototype(IncomingMessage, app.request), ServerResponse: withPrototype(ServerResponse, app.response) },
      app,
    );
    if (options.forceCloseConnections) {
      // Nest's own bookkeeping, so that `app.close()` cuts idle keep-alive connections as before.
      (this as unknown as { trackOpenConnections(): void }).trackOpenConnections();
    }
  }
}

/** A subclass of Node's `base` whose instances are built with `prototype` (which must inherit from `base.prototype`). */
export function withPrototype<T extends typeof IncomingMessage | typeof ServerResponse>(base: T, prototype: object): T {
  if (!(prototype instanceof base)) throw new Error(`withPrototype: the prototype does not inherit from ${base.name}`);
  const Built = function (this: object, ...args: unknown[]) {
    (base as unknown as (this: object, ...a: unknown[]) => void).apply(this, args);
  };
  Built.prototype = prototype;
  return Built as unknown as T;
}
