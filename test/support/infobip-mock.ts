/**
 * A stand-in for Infobip's SMS, Calls (dialogs) and account APIs, held to our contract fixtures
 * (libs/cpaas/src/infobip/fixtures/: schemas written from Infobip's generated SDK models, since
 * Infobip publishes no OpenAPI description we may keep). Like Prism for the other vendors, it refuses
 * a request that breaks its schema (400, Infobip's ApiError body naming the field) and one without
 * `Authorization: App <key>` (401), and answers the others with the fixtures' bodies. `refusals`
 * lists every refused request, so a test can fail on any.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { resolve } from 'node:path';
import Ajv from 'ajv';
import { listenOnLoopback } from './loopback-server';

export const INFOBIP_FIXTURES = resolve('libs/cpaas/src/infobip/fixtures');
export const infobipFixture = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(`${INFOBIP_FIXTURES}/${file}`, 'utf8')) as Record<string, unknown>;

export interface InfobipRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface InfobipMock {
  url: string;
  requests: InfobipRequest[];
  refusals: string[];
  close(): Promise<void>;
}

const ajv = new Ajv({ allErrors: true });
const validators = {
  sms: ajv.compile(infobipFixture('sms-request.schema.json')),
  dialog: ajv.compile(infobipFixture('dialog-request.schema.json')),
};

export async function startInfobipMock(apiKey: string): Promise<InfobipMock> {
  const requests: InfobipRequest[] = [];
  const refusals: string[] = [];
  let dialogs = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks).toString() };
      requests.push(request);
      const answer = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const refuse = (
        status: number,
        errorCode: string,
        description: string,
        violations: Array<{ property: string; violation: string }> = [],
      ) => {
        refusals.push(`${request.method} ${request.path}: ${status} ${description}`);
        answer(status, { errorCode, description, action: 'Check the request', violations, resources: [] });
      };
      if (req.headers.authorization !== `App ${apiKey}`) return refuse(401, 'E401', 'Invalid login details');
      const route = `${request.method} ${new URL(request.path, 'http://mock').pathname}`;
      const validate =
        route === 'POST /sms/3/messages' ? validators.sms : route === 'POST /calls/1/dialogs' ? validators.dialog : undefined;
      let body: unknown;
      if (validate) {
        if (!/^application\/json/.test(req.headers['content-type'] ?? ''))
          return refuse(415, 'E415', 'Content-Type must be application/json');
        try {
          body = JSON.parse(request.body);
        } catch {
          return refuse(400, 'E400', 'Body is not JSON');
        }
        if (!validate(body))
          return refuse(
            400,
            'E400',
            'Request does not match the contract',
            (validate.errors ?? []).map((e) => ({ property: e.dataPath || '(body)', violation: e.message ?? 'invalid' })),
          );
      }
      switch (route) {
        case 'POST /sms/3/messages':
          return answer(200, infobipFixture('sms-response.json'));
        case 'POST /calls/1/dialogs': {
          const given = body as { parentCallId: string; childCallRequest: { endpoint: { phoneNumber: string }; from?: string } };
          const fixture = infobipFixture('dialog-response.json') as { parentCall: object; childCall: object };
          dialogs += 1;
          return answer(201, {
            ...fixture,
            id: `dialog-${dialogs}`,
            parentCall: { ...fixture.parentCall, id: given.parentCallId },
            childCall: { ...fixture.childCall, to: given.childCallRequest.endpoint.phoneNumber, from: given.childCallRequest.from },
          });
        }
        case 'GET /account/1/balance':
          return answer(200, infobipFixture('balance.json'));
        default:
          return refuse(404, 'E404', `No route ${route}`);
      }
    });
  });
  const listening = await listenOnLoopback(server);
  return { url: listening.url, requests, refusals, close: () => listening.close() };
}
