/**
 * A vendor API stand-in for the adapter specs: a loopback HTTP server on a port the OS picks that
 * records every request as it arrived and answers each with the next scripted reply (an HTTP
 * answer, a reset connection, or silence until the client gives up). What the adapter makes of
 * those replies is what a spec asserts.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

interface ReceivedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  pathname: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
}

export type VendorReply =
  | { kind: 'answer'; status: number; body: string; contentType?: string }
  /** The connection is reset (TCP RST) after the request arrived, before any answer. */
  | { kind: 'reset' }
  /** No answer at all: the client's timeout decides. */
  | { kind: 'silent' };

export interface VendorStandIn {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  requests: ReceivedRequest[];
  /** Replies for the next requests, in order; once used up, `fallback` answers. */
  reply(...replies: VendorReply[]): void;
  /** Forgets the recorded requests and the scripted replies. */
  reset(): void;
  close(): Promise<void>;
}

export const jsonAnswer = (status: number, body: unknown, contentType = 'application/json'): VendorReply => ({
  kind: 'answer',
  status,
  body: JSON.stringify(body),
  contentType,
});

export async function startVendorStandIn(
  fallback: VendorReply = { kind: 'answer', status: 500, body: 'no reply scripted' },
): Promise<VendorStandIn> {
  const requests: ReceivedRequest[] = [];
  const scripted: VendorReply[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://stand-in');
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '/',
        pathname: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const reply = scripted.shift() ?? fallback;
      if (reply.kind === 'reset') req.socket.resetAndDestroy();
      else if (reply.kind === 'answer')
        res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'application/json' }).end(reply.body);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    reply: (...replies) => scripted.push(...replies),
    reset: () => {
      requests.length = 0;
      scripted.length = 0;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** A loopback URL where nothing listens: the port was the OS's pick a moment ago, then closed. */
export async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return `http://127.0.0.1:${port}`;
}
