/**
 * A stand-in for Africa's Talking's SMS and account APIs on loopback: it answers a send as the SMS API
 * does (201, one recipient with statusCode 101 and a messageId) and the account read with a balance,
 * refuses a request without the `apikey` header (401, a text line, as the API does) or one missing a
 * field the `africastalking` package always sends (400), and records everything. What a request must
 * look like is taken from the package: libs/cpaas/src/africastalking/africastalking-package.spec.ts
 * compares the adapter's requests with the package's.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { listenOnLoopback } from './loopback-server';

export interface AfricasTalkingRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface AfricasTalkingMock {
  url: string;
  requests: AfricasTalkingRequest[];
  refusals: string[];
  close(): Promise<void>;
}

const SMS_FIELDS = ['username', 'to', 'message', 'from', 'bulkSMSMode'];

export async function startAfricasTalkingMock(apiKey: string, username: string): Promise<AfricasTalkingMock> {
  const requests: AfricasTalkingRequest[] = [];
  const refusals: string[] = [];
  let sent = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString() };
      requests.push(request);
      const refuse = (status: number, text: string) => {
        refusals.push(`${request.method} ${request.path}: ${status} ${text}`);
        res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
      };
      if (req.headers.apikey !== apiKey) return refuse(401, 'The supplied authentication is invalid');
      const url = new URL(request.path, 'http://mock');
      if (request.method === 'POST' && url.pathname === '/version1/messaging') {
        const form = Object.fromEntries(new URLSearchParams(request.body));
        const missing = SMS_FIELDS.filter((f) => !form[f]);
        if (missing.length > 0 || form.username !== username)
          return refuse(400, `Request is missing required form field(s) ${missing.join(', ')}`);
        sent += 1;
        return res.writeHead(201, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            SMSMessageData: {
              Message: 'Sent to 1/1 Total Cost: NGN 2.2000',
              Recipients: [{ statusCode: 101, number: form.to, status: 'Success', cost: 'NGN 2.2000', messageId: `ATXid_${sent}` }],
            },
          }),
        );
      }
      if (request.method === 'GET' && url.pathname === '/version1/user') {
        if (url.searchParams.get('username') !== username) return refuse(400, 'Invalid username');
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ UserData: { balance: 'NGN 15000.0000' } }));
      }
      return refuse(404, 'Not Found');
    });
  });
  const listening = await listenOnLoopback(server);
  return { url: listening.url, requests, refusals, close: () => listening.close() };
}
