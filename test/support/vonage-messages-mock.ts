/**
 * A stand-in for Vonage's Messages API v1 (`POST /v1/messages`), which is newer than Vonage's
 * published descriptions (they stop at the v0.1 beta): it records every request and answers as
 * the API documents (202 with a `message_uuid`; 401 problem without credentials; 422 problem for a
 * body that is not an SMS text message). What a request must look like is taken from the official
 * `@vonage/messages` package: test/vonage-adapter.e2e-spec.ts compares the adapter's request with
 * the package's, captured here.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import { freePortBelow32768 } from './prism';

export interface CapturedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface VonageMessagesMock {
  url: string;
  requests: CapturedRequest[];
  close(): Promise<void>;
}

const problem = (code: string, title: string, detail: string) =>
  JSON.stringify({ type: `https://developer.vonage.com/api-errors/messages#${code}`, title, detail, instance: randomUUID() });

export async function startVonageMessagesMock(): Promise<VonageMessagesMock> {
  const requests: CapturedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const captured = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString() };
      requests.push(captured);
      const answer = (status: number, body: string, type = 'application/problem+json') =>
        res.writeHead(status, { 'content-type': type }).end(body);
      if (captured.method !== 'POST' || captured.path !== '/v1/messages')
        return answer(404, problem('not-found', 'Not found', captured.path));
      if (!/^(Basic|Bearer) \S+$/.test(req.headers.authorization ?? ''))
        return answer(401, JSON.stringify({ type: 'https://developer.vonage.com/api-errors#unauthorized', title: 'Unauthorized' }));
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(captured.body) as Record<string, unknown>;
      } catch {
        return answer(422, problem('1020', 'Invalid params', 'The body is not JSON.'));
      }
      const digits = (value: unknown) => typeof value === 'string' && /^[1-9]\d{6,14}$/.test(value);
      if (message.channel !== 'sms' || message.message_type !== 'text' || typeof message.text !== 'string')
        return answer(422, problem('1020', 'Invalid params', 'channel sms and message_type text with a text are expected.'));
      if (!digits(message.to) || !digits(message.from))
        return answer(422, problem('1020', 'Invalid params', 'to and from are E.164 digits without a leading +.'));
      return answer(202, JSON.stringify({ message_uuid: randomUUID() }), 'application/json');
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const port = await freePortBelow32768();
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
