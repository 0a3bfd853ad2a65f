/**
 * A small fault-injecting HTTP proxy of the test suite's own, put between an adapter and the mock
 * of its vendor (Prism): it passes requests through, or answers them with the fault a test set
 * (a status with a body, a reset connection, no answer at all, or the upstream answer rewritten,
 * e.g. a 2xx without its id), for every request or only for those a rule matches (one API of the
 * vendor failing while another answers). It records every exchange, so a test can also fail on any
 * request the upstream mock refused (`refusals`). Vendor-neutral: fault bodies are the test's.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { freePortBelow32768 } from './prism';

export type Fault =
  | { kind: 'pass' }
  /** Answer with this status and body, without asking upstream. */
  | { kind: 'answer'; status: number; body: string; contentType?: string }
  /** Destroy the connection once the request arrived. */
  | { kind: 'reset' }
  /** Never answer (the socket is closed when the proxy closes). */
  | { kind: 'hang' }
  /** Ask upstream, then change its body before answering. */
  | { kind: 'rewrite'; body: (upstream: string) => string };

export interface Exchange {
  method: string;
  path: string;
  /** When the request had arrived whole (epoch ms). */
  at: number;
  headers: IncomingHttpHeaders;
  body: string;
  fault: Fault['kind'];
  /** Upstream's answer, when it was asked. */
  upstream?: { status: number; body: string };
}

export interface FaultProxy {
  url: string;
  exchanges: Exchange[];
  /** Faults for the next requests, in order; once used up, requests pass. */
  next(...faults: Fault[]): void;
  /** A fault for every request until changed (`{ kind: 'pass' }` to stop). */
  always(fault: Fault): void;
  /**
   * A fault for every request `match` accepts (before `next` and `always`), until the returned function
   * removes the rule: e.g. the Messages API failing while the account API answers.
   */
  when(match: (request: { method: string; path: string }) => boolean, fault: Fault): () => void;
  /** Every request the upstream refused with a 4xx, described by `describe` (e.g. `prismRefusal`). */
  refusals(describe: (status: number, body: string) => string | undefined): string[];
  close(): Promise<void>;
}

/**
 * `upstreamUrl` is one mock, or a choice of mock by request path (a vendor whose APIs are described
 * in several files, each served by its own Prism).
 */
export async function startFaultProxy(upstreamUrl: string | ((path: string) => string)): Promise<FaultProxy> {
  const upstreamFor = (path: string): URL => new URL(typeof upstreamUrl === 'string' ? upstreamUrl : upstreamUrl(path));
  const queue: Fault[] = [];
  let standing: Fault = { kind: 'pass' };
  const rules: Array<{ match: (request: { method: string; path: string }) => boolean; fault: Fault }> = [];
  const exchanges: Exchange[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? 'GET', path: req.url ?? '/' };
      const fault = rules.find((rule) => rule.match(request))?.fault ?? queue.shift() ?? standing;
      const exchange: Exchange = {
        ...request,
        at: Date.now(),
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        fault: fault.kind,
      };
      exchanges.push(exchange);
      switch (fault.kind) {
        case 'answer':
          res.writeHead(fault.status, { 'content-type': fault.contentType ?? 'application/json' }).end(fault.body);
          return;
        case 'reset':
          req.socket.destroy();
          return;
        case 'hang':
          return;
        case 'pass':
        case 'rewrite':
          forward(exchange, res, fault.kind === 'rewrite' ? fault.body : (body) => body);
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  function forward(exchange: Exchange, res: ServerResponse, transform: (body: string) => string): void {
    const upstream = upstreamFor(exchange.path);
    const headers = { ...exchange.headers, host: upstream.host };
    delete headers['content-length'];
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: exchange.method,
        path: exchange.path,
        headers: { ...headers, 'content-length': Buffer.byteLength(exchange.body) },
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const body = Buffer.concat(chunks).toString();
          exchange.upstream = { status: answer.statusCode ?? 502, body };
          const sent = transform(body);
          res
            .writeHead(answer.statusCode ?? 502, {
              'content-type': answer.headers['content-type'] ?? 'application/json',
              'content-length': Buffer.byteLength(sent),
            })
            .end(sent);
        });
      },
    );
    out.on('error', (error) => res.writeHead(502, { 'content-type': 'text/plain' }).end(`fault proxy: upstream ${error.message}`));
    out.end(exchange.body);
  }

  const port = await freePortBelow32768();
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    next: (...faults) => void queue.push(...faults),
    always: (fault) => {
      standing = fault;
    },
    when: (match, fault) => {
      const rule = { match, fault };
      rules.push(rule);
      return () => void rules.splice(rules.indexOf(rule), 1);
    },
    refusals: (describe) =>
      exchanges.flatMap((e) => {
        const refusal = e.upstream && describe(e.upstream.status, e.upstream.body);
        return refusal ? [`${e.method} ${e.path}: ${refusal}`] : [];
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
