/**
 * Inbound triggering: the simulator delivers signed webhooks to a tiny local HTTP server standing
 * in for the broker, and the `sim` adapter (libs/cpaas) verifies and parses what arrives.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SIM_MAGIC_NUMBERS, SimProviderAdapter, type WebhookRequest, type WebhookRoute } from '@app/cpaas';
import type { SimulatorConfig } from '../config/sim-config';
import { createSimulatorApp } from '../sim-app';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  rawBody: Buffer;
}

/** A received webhook as the broker's controller hands it to the adapter. */
function webhookRequest(webhook: Received): WebhookRequest {
  const route = webhook.path.replace(/^\/v1\/providers\/[^/]+\//, '') as WebhookRoute;
  return { url: `http://broker.test${webhook.path}`, method: 'POST', route, headers: webhook.headers, rawBody: webhook.rawBody };
}

const CALLER = '+2348030000001';
const OTHER = '+2348030000002';
const PROXY = '+2348090000001';

describe('inbound events from a simulated provider', () => {
  let app: NestExpressApplication;
  let config: SimulatorConfig;
  let url: string;
  let broker: Server;
  let received: Received[];
  /** What the stand-in broker answers, by path suffix. */
  let answers: Record<string, { status: number; type: string; body: string }>;
  const adapter = new SimProviderAdapter({
    name: 'primary',
    baseUrl: 'http://127.0.0.1:9',
    timeoutMs: 1_000,
    webhookSecret: 'hook-secret',
  });

  const trigger = (body: object, provider = 'primary'): Promise<Response> =>
    fetch(`${url}/_sim/providers/${provider}/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  /** Resolves when the stand-in broker got `count` webhooks in all: on arrival, not on a time budget. */
  let waiters: Array<{ count: number; resolve: () => void }> = [];
  const arrived = (count: number): Promise<void> =>
    received.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }));

  beforeAll(async () => {
    broker = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ path: request.url ?? '', headers: request.headers, rawBody: Buffer.concat(chunks) });
        waiters = waiters.filter((w) => (received.length >= w.count ? (w.resolve(), false) : true));
        const answer = Object.entries(answers).find(([suffix]) => request.url?.endsWith(suffix))?.[1] ?? {
          status: 404,
          type: 'text/plain',
          body: 'no',
        };
        response.writeHead(answer.status, { 'content-type': answer.type }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => broker.listen(0, '127.0.0.1', resolve));
    config = {
      port: 0,
      brokerUrl: `http://127.0.0.1:${(broker.address() as AddressInfo).port}`,
      webhookSecret: 'hook-secret',
    };
    app = await createSimulatorApp(config);
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  beforeEach(async () => {
    received = [];
    waiters = [];
    answers = {
      '/inbound/sms': { status: 200, type: 'application/json', body: '{"relayed":true}' },
      '/status': { status: 204, type: 'text/plain', body: '' },
    };
    await fetch(`${url}/_sim/reset`, { method: 'POST' });
  });
  afterAll(async () => {
    await app.close();
    await adapter.close();
    await new Promise((resolve) => broker.close(resolve));
  });

  it('delivers an inbound SMS as a signed webhook and answers with the broker status and body', async () => {
    const response = await trigger({ channel: 'sms', from: CALLER, to: PROXY, text: 'where are you?' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ relayed: true });

    expect(received).toHaveLength(1);
    const [webhook] = received;
    expect(webhook.path).toBe('/v1/providers/primary/inbound/sms');
    expect(webhook.headers['x-sim-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(adapter.verifyWebhook(webhookRequest(webhook))).toBe('valid');
    expect(adapter.parseInbound('sms', webhookRequest(webhook))).toEqual({
      channel: 'sms',
      eventId: expect.any(String),
      messageId: response.headers.get('x-sim-message-id'),
      from: CALLER,
      to: PROXY,
      text: 'where are you?',
      at: expect.any(String),
    });
  });

  it('passes a broker refusal through unchanged', async () => {
    answers['/inbound/sms'] = { status: 401, type: 'application/problem+json', body: '{"title":"bad signature"}' };
    const response = await trigger({ channel: 'sms', from: CALLER, to: PROXY, text: 'x' });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(await response.json()).toEqual({ title: 'bad signature' });
  });

  it('follows a bridge instruction: places the call, logs it and posts call.completed', async () => {
    answers['/inbound/voice'] = { status: 200, ...toAnswer(adapter.voiceBridgeInstruction({ to: OTHER, callerId: PROXY })) };
    const response = await trigger({ channel: 'voice', from: CALLER, to: PROXY });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ action: 'bridge', to: OTHER, callerId: PROXY });
    expect(response.headers.get('x-sim-status-webhook')).toBe('204');

    expect(received.map((r) => r.path)).toEqual(['/v1/providers/primary/inbound/voice', '/v1/providers/primary/status']);
    for (const webhook of received) expect(adapter.verifyWebhook(webhookRequest(webhook))).toBe('valid');
    const inbound = adapter.parseInbound('voice', webhookRequest(received[0]));
    expect(inbound).toMatchObject({ channel: 'voice', from: CALLER, to: PROXY, callId: response.headers.get('x-sim-call-id') });
    const status = adapter.parseStatus(webhookRequest(received[1]));
    expect(status).toMatchObject({
      type: 'call.completed',
      callId: response.headers.get('x-sim-call-id'),
      bridgedCallId: response.headers.get('x-sim-bridged-call-id'),
      from: PROXY,
      to: OTHER,
      answer: 'completed',
      durationSec: 30,
    });

    const log = (await (await fetch(`${url}/_sim/providers/primary/calls`)).json()) as unknown[];
    expect(log).toEqual([
      expect.objectContaining({
        type: 'call',
        from: PROXY,
        to: OTHER,
        callId: response.headers.get('x-sim-bridged-call-id'),
        answer: 'completed',
        outcome: 'ok',
      }),
    ]);
  });

  it('reports a busy callee of a bridge in call.completed', async () => {
    answers['/inbound/voice'] = {
      status: 200,
      ...toAnswer(adapter.voiceBridgeInstruction({ to: SIM_MAGIC_NUMBERS.busy, callerId: PROXY })),
    };
    await trigger({ channel: 'voice', from: CALLER, to: PROXY, durationSec: 99 });
    expect(adapter.parseStatus(webhookRequest(received[1]))).toMatchObject({ answer: 'busy', durationSec: 0 });
  });

  it('places no call when the broker says something instead of bridging', async () => {
    answers['/inbound/voice'] = { status: 200, ...toAnswer(adapter.voiceSayInstruction({ text: 'This number is no longer in service.' })) };
    const response = await trigger({ channel: 'voice', from: CALLER, to: PROXY });
    expect(await response.json()).toEqual({ action: 'say', text: 'This number is no longer in service.' });
    expect(received).toHaveLength(1);
    expect(await (await fetch(`${url}/_sim/providers/primary/calls`)).json()).toEqual([]);
  });

  it('posts delivery receipts after an SMS only when status webhooks are on', async () => {
    const sendSms = () =>
      fetch(`${url}/providers/failover/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ from: PROXY, to: OTHER, text: 'hi' }),
      });
    const { messageId: unreported } = (await (await sendSms()).json()) as { messageId: string };

    await fetch(`${url}/_sim/providers/failover/status-webhooks`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"enabled":true}',
    });
    const { messageId } = (await (await sendSms()).json()) as { messageId: string };
    // The receipt of the second SMS has come; had the first one had a receipt, it was posted before it.
    await arrived(1);
    const receipts = received.map((r) => ({ path: r.path, ...(adapter.parseStatus(webhookRequest(r)) as { messageId?: string }) }));
    expect(receipts.map((r) => r.messageId)).not.toContain(unreported);
    expect(receipts).toEqual([
      expect.objectContaining({ path: '/v1/providers/failover/status', type: 'message.delivered', messageId, from: PROXY, to: OTHER }),
    ]);
  });

  it('answers 502 when the broker cannot be reached, and 400 for a bad trigger', async () => {
    const brokerUrl = config.brokerUrl;
    config.brokerUrl = 'http://127.0.0.1:9';
    try {
      const response = await trigger({ channel: 'sms', from: CALLER, to: PROXY, text: 'x' });
      expect(response.status).toBe(502);
      expect(await response.json()).toMatchObject({ code: 'broker-unreachable' });
    } finally {
      config.brokerUrl = brokerUrl;
    }
    expect((await trigger({ channel: 'fax', from: CALLER, to: PROXY })).status).toBe(400);
    expect((await trigger({ channel: 'sms', from: 'me', to: PROXY, text: 'x' })).status).toBe(400);
    expect((await trigger({ channel: 'sms', from: CALLER, to: PROXY })).status).toBe(400);
  });
});

function toAnswer(instruction: { contentType: string; body: string }): { type: string; body: string } {
  return { type: instruction.contentType, body: instruction.body };
}
