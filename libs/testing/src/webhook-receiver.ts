/**
 * A local webhook endpoint for tests and the benchmark: listens on 127.0.0.1, port 0, records what it
 * receives and answers as told. `answer` may return a promise to hold a request in flight.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

export type Answerer = (request: ReceivedWebhook) => Answer | Promise<Answer> | ((response: ServerResponse) => void);

export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  answer: Answerer = () => ({ status: 200 });
  inFlight = 0;
  maxInFlight = 0;
  connections = 0;
  private readonly sockets = new Set<Socket>();
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly port: number,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}/hooks`, port);
    server.on('connection', (socket: Socket) => {
      receiver.connections += 1;
      receiver.sockets.add(socket);
      socket.on('close', () => receiver.sockets.delete(socket));
    });
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on(
        'end',
        () => void receiver.handle({ path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }, res),
      );
    });
    return receiver;
  }

  /** Resolves once `count` requests arrived in all. */
  waitFor(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  /** Event ids (`id` of the body) received so far. */
  eventIds(): string[] {
    return this.received.map((r) => (JSON.parse(r.body) as { id: string }).id);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: ReceivedWebhook, res: ServerResponse): Promise<void> {
    this.received.push(request);
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.waiters = this.waiters.filter((w) => (this.received.length >= w.count ? (w.resolve(), false) : true));
    try {
      const answer = await this.answer(request);
      if (typeof answer === 'function') {
        answer(res);
        return;
      }
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body ?? '');
    } catch {
      res.destroy();
    } finally {
      this.inFlight -= 1;
    }
  }
}
