/** The simulator's control routes over HTTP: fault switch (and its validation), provider list, call log. */
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { SimulatorConfig } from '../config/sim-config';
import { createSimulatorApp } from '../sim-app';

describe('simulator control routes', () => {
  let app: NestExpressApplication;
  let url: string;

  const send = async (method: string, path: string, body?: unknown): Promise<{ status: number; type: string | null; body: unknown }> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, type: response.headers.get('content-type'), body: text ? JSON.parse(text) : undefined };
  };

  beforeAll(async () => {
    const config: SimulatorConfig = { port: 0, brokerUrl: 'http://127.0.0.1:9', webhookSecret: 'secret', callLogLimit: 3 };
    app = await createSimulatorApp(config);
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  beforeEach(() => send('POST', '/_sim/reset'));
  afterAll(() => app.close());

  it('starts with primary and failover, healthy', async () => {
    const { body } = await send('GET', '/_sim/providers');
    expect(body).toEqual([
      { name: 'primary', faults: { mode: 'ok', errorRate: 0, latencyMs: 0 }, statusWebhooks: false, calls: 0 },
      { name: 'failover', faults: { mode: 'ok', errorRate: 0, latencyMs: 0 }, statusWebhooks: false, calls: 0 },
    ]);
  });

  it('sets and reads back the faults; fields left out take their defaults', async () => {
    expect(await send('PUT', '/_sim/providers/primary/faults', { mode: 'flaky', errorRate: 0.25, latencyMs: 10 })).toMatchObject({
      status: 200,
      body: { mode: 'flaky', errorRate: 0.25, latencyMs: 10 },
    });
    expect((await send('GET', '/_sim/providers/primary/faults')).body).toEqual({ mode: 'flaky', errorRate: 0.25, latencyMs: 10 });
    expect((await send('PUT', '/_sim/providers/primary/faults', { mode: 'down' })).body).toEqual({
      mode: 'down',
      errorRate: 0,
      latencyMs: 0,
    });
    expect((await send('PUT', '/_sim/providers/primary/faults', {})).body).toEqual({ mode: 'ok', errorRate: 0, latencyMs: 0 });
  });

  it.each([
    ['an unknown mode', { mode: 'broken' }, 'mode'],
    ['an errorRate above 1', { errorRate: 1.5 }, 'errorRate'],
    ['a negative latency', { latencyMs: -1 }, 'latencyMs'],
    ['a fractional latency', { latencyMs: 1.5 }, 'latencyMs'],
    ['an unknown field', { mood: 'ok' }, 'mood'],
  ])('refuses %s with a 400 problem naming the field', async (_, faults, field) => {
    const answer = await send('PUT', '/_sim/providers/primary/faults', faults);
    expect(answer).toMatchObject({ status: 400, type: expect.stringContaining('application/problem+json') });
    expect(answer.body).toMatchObject({ status: 400, code: 'bad-request', errors: [expect.objectContaining({ field })] });
    expect((await send('GET', '/_sim/providers/primary/faults')).body).toEqual({ mode: 'ok', errorRate: 0, latencyMs: 0 });
  });

  it('refuses malformed JSON and a bad provider name with 400 problems', async () => {
    expect(await send('PUT', '/_sim/providers/primary/faults', '{"mode":')).toMatchObject({
      status: 400,
      type: expect.stringContaining('problem+json'),
    });
    expect(await send('GET', '/_sim/providers/Not_A_Name/faults')).toMatchObject({ status: 400, body: { code: 'bad-request' } });
  });

  it('creates a provider on first use', async () => {
    await send('PUT', '/_sim/providers/backup-2/faults', { mode: 'error' });
    expect((await send('GET', '/_sim/providers')).body).toContainEqual(
      expect.objectContaining({ name: 'backup-2', faults: expect.objectContaining({ mode: 'error' }) }),
    );
  });

  it('keeps the newest records up to its limit, filters by type and clears', async () => {
    for (let i = 0; i < 4; i++) await send('GET', '/providers/primary/v1/health');
    await send('POST', '/providers/primary/v1/messages', { from: '+2348090000001', to: '+2348030000002', text: 'hello' });
    const log = (await send('GET', '/_sim/providers/primary/calls')).body as Array<{ seq: number; type: string }>;
    expect(log.map((r) => r.type)).toEqual(['health', 'health', 'sms']);
    expect(log.map((r) => r.seq - log[0].seq)).toEqual([0, 1, 2]);
    expect((await send('GET', '/_sim/providers/primary/calls?type=sms')).body).toMatchObject([
      { type: 'sms', text: 'hello', outcome: 'ok' },
    ]);
    expect((await send('GET', '/_sim/providers/primary/calls?type=health&limit=1')).body).toMatchObject([{ seq: log[1].seq }]);
    expect((await send('GET', '/_sim/providers/primary/calls?limit=0')).status).toBe(400);
    expect((await send('DELETE', '/_sim/providers/primary/calls')).status).toBe(204);
    expect((await send('GET', '/_sim/providers/primary/calls')).body).toEqual([]);
  });

  it('answers a bad provider API request with a 400 problem carrying the error code', async () => {
    const answer = await send('POST', '/providers/primary/v1/calls', { from: '+2348090000001', to: '12345' });
    expect(answer).toMatchObject({
      status: 400,
      type: expect.stringContaining('problem+json'),
      body: { code: 'invalid-number', errors: [{ field: 'to' }] },
    });
    expect((await send('POST', '/providers/primary/v1/messages', { from: '+2348090000001', to: '+2348030000002' })).body).toMatchObject({
      code: 'bad-request',
      errors: [{ field: 'text' }],
    });
  });

  it('toggles status webhooks per provider, off by default', async () => {
    expect((await send('GET', '/_sim/providers/failover/status-webhooks')).body).toEqual({ enabled: false });
    expect((await send('PUT', '/_sim/providers/failover/status-webhooks', { enabled: true })).body).toEqual({ enabled: true });
    expect((await send('PUT', '/_sim/providers/failover/status-webhooks', { enabled: 'yes' })).status).toBe(400);
    expect((await send('GET', '/_sim/providers/primary/status-webhooks')).body).toEqual({ enabled: false });
  });
});
