import type { Request } from 'express';

/**
 * The client's address: the connection's, or behind a proxy that TRUST_PROXY names, the address that proxy
 * forwarded (Express's `req.ip`, set up from TRUST_PROXY in broker-app.ts). A forwarding header from anyone
 * else is whatever the client wants it to be, so it is never read here directly.
 */
export function clientAddress(request: Request): string {
  return request.ip ?? request.socket.remoteAddress ?? 'unknown';
}
