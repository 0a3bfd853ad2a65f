/**
 * The `sim` adapter (libs/cpaas) against the real simulator over HTTP: every fault mode and how
 * the adapter classifies it (docs/design.md#provider-breaker), callee outcomes, invalid numbers, latency, the call log.
 */
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SIM_MAGIC_NUMBERS, SimProviderAdapter, type ProviderResult } from '@app/cpaas';
import type { SimulatorConfig } from '../config/sim-config';
import { createSimulatorApp } from '../sim-app';

const A = '+2348030000001';
const B = '+2348030000002';
const PROXY = '+2348090000001';

describe('sim adapter against the simulator', () => {
  let app: NestExpressApplication;
  let url: string;
  let draws: number[];
  const adapters: SimProviderAdapter[] = [];

  const adapter = (name = 'primary', timeoutMs = 2_000): SimProviderAdapter => {
    const created = new SimProviderAdapter({ name, baseUrl: url, timeoutMs, webhookSecret: 'secret' });
    adapters.push(created);
    return created;
  };
  const setFaults = async (name: string, faults: object): Promise<void> => {
    const response = await fetch(`${url}/_sim/providers/${name}/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(faults),
    });
    expect(response.status).toBe(200);
  };
  const callLog = async (name: string): Promise<Array<Record<string, unknown>>> =>
    (await (await fetch(`${url}/_sim/providers/${name}/calls`)).json()) as Array<Record<string, unknown>>;
  const failure = <T>(result: ProviderResult<T>) => {
    if (result.ok) throw new Error(`expected a failure, got ${JSON.stringify(result.value)}`);
    return result.failure;
  };

  beforeAll(async () => {
    const config: SimulatorConfig = {
      port: 0,
      brokerUrl: 'http://127.0.0.1:9',
      webhookSecret: 'secret',
      random: () => draws.shift() ?? 0.5,
    };
    app = await createSimulatorApp(config);
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  beforeEach(async () => {
    draws = [];
    await fetch(`${url}/_sim/reset`, { method: 'POST' });
  });
  afterAll(async () => {
    await Promise.all(adapters.map((a) => a.close()));
    await app.close();
  });

  describe('with the provider ok', () => {
    it('binds, sends, bridges, unbinds and passes its health check', async () => {
      const primary = adapter();
      const bind = await primary.bindProxy({ sessionId: 's1', proxyNumber: PROXY, participants: [A, B] });
      expect(bind).toMatchObject({ ok: true, value: { bindingId: expect.stringMatching(/^bnd_/) } });
      expect(await primary.sendSms({ from: PROXY, to: B, text: 'hi' })).toMatchObject({
        ok: true,
        value: { messageId: expect.any(String) },
      });
      expect(await primary.bridgeCall({ from: PROXY, to: B })).toMatchObject({
        ok: true,
        value: { callId: expect.any(String), answer: 'completed' },
      });
      const bindingId = bind.ok ? bind.value.bindingId : '';
      expect(await primary.unbindProxy({ sessionId: 's1', proxyNumber: PROXY, bindingId })).toMatchObject({ ok: true });
      expect(await primary.healthCheck()).toMatchObject({ ok: true, latencyMs: expect.any(Number) });

      expect((await callLog('primary')).map((r) => [r.type, r.outcome])).toEqual([
        ['bind', 'ok'],
        ['sms', 'ok'],
        ['call', 'ok'],
        ['unbind', 'ok'],
        ['health', 'ok'],
      ]);
      expect((await callLog('primary'))[1]).toMatchObject({ type: 'sms', from: PROXY, to: B, text: 'hi', at: expect.stringMatching(/Z$/) });
    });

    it.each([
      ['busy', SIM_MAGIC_NUMBERS.busy],
      ['no-answer', SIM_MAGIC_NUMBERS.noAnswer],
      ['declined', SIM_MAGIC_NUMBERS.declined],
    ] as const)('treats a %s callee as a successful call setup', async (answer, callee) => {
      expect(await adapter().bridgeCall({ from: PROXY, to: callee })).toMatchObject({ ok: true, value: { answer } });
    });

    it('does not count an invalid number against the provider', async () => {
      const result = await adapter().sendSms({ from: PROXY, to: '0803 000 0002', text: 'hi' });
      expect(failure(result)).toMatchObject({ countsAgainstProvider: false, cause: 'invalid-number', status: 400 });
      expect(failure(result).reason).toMatch(/^primary: invalid number: to: /);
      expect(failure(await adapter().bindProxy({ sessionId: 's', proxyNumber: PROXY, participants: [A, 'nope'] }))).toMatchObject({
        countsAgainstProvider: false,
        cause: 'invalid-number',
      });
    });

    it('plays any named provider, each with its own fault switch', async () => {
      await setFaults('tertiary', { mode: 'error' });
      expect(failure(await adapter('tertiary').healthCheck()).cause).toBe('http-5xx');
      expect(await adapter('primary').healthCheck()).toMatchObject({ ok: true });
    });
  });

  describe('fault modes', () => {
    it('down drops the connection: a transport failure', async () => {
      await setFaults('primary', { mode: 'down' });
      const primary = adapter();
      const result = failure(await primary.bindProxy({ sessionId: 's', proxyNumber: PROXY, participants: [A, B] }));
      expect(result).toMatchObject({ countsAgainstProvider: true, cause: 'transport' });
      expect(result.reason).toMatch(/^primary: .* on bind$/);
      expect(result.status).toBeUndefined();

      await setFaults('primary', { mode: 'ok' });
      expect(await primary.healthCheck()).toMatchObject({ ok: true });
    });

    it('error answers 503: an http-5xx failure', async () => {
      await setFaults('primary', { mode: 'error' });
      expect(failure(await adapter().bindProxy({ sessionId: 's', proxyNumber: PROXY, participants: [A, B] }))).toEqual({
        countsAgainstProvider: true,
        cause: 'http-5xx',
        status: 503,
        reason: 'primary: HTTP 503 on bind',
      });
    });

    it('timeout never answers: the adapter gives up after timeoutMs', async () => {
      await setFaults('primary', { mode: 'timeout' });
      const result = failure(await adapter('primary', 50).sendSms({ from: PROXY, to: B, text: 'hi' }));
      expect(result).toMatchObject({ countsAgainstProvider: true, cause: 'timeout', reason: 'primary: no answer within 50 ms on sms' });
      expect(await callLog('primary')).toMatchObject([{ type: 'sms', outcome: 'timeout' }]);
    });

    it('reject answers 200 without an id: a rejection counts as a failure, for every operation', async () => {
      await setFaults('primary', { mode: 'reject' });
      const primary = adapter();
      const results: Array<ProviderResult<unknown>> = [
        await primary.bindProxy({ sessionId: 's', proxyNumber: PROXY, participants: [A, B] }),
        await primary.unbindProxy({ sessionId: 's', proxyNumber: PROXY, bindingId: 'bnd_1' }),
        await primary.sendSms({ from: PROXY, to: B, text: 'hi' }),
        await primary.bridgeCall({ from: PROXY, to: B }),
        await primary.healthCheck(),
      ];
      for (const result of results) expect(failure(result)).toMatchObject({ countsAgainstProvider: true, cause: 'rejected', status: 200 });
      expect(failure(results[0]).reason).toBe('primary: HTTP 200 without bindingId (rejected) on bind');
    });

    it('flaky fails errorRate of the calls, as 503s', async () => {
      await setFaults('primary', { mode: 'flaky', errorRate: 1 });
      expect(failure(await adapter().healthCheck()).cause).toBe('http-5xx');
      await setFaults('primary', { mode: 'flaky', errorRate: 0 });
      expect(await adapter().healthCheck()).toMatchObject({ ok: true });

      await setFaults('primary', { mode: 'flaky', errorRate: 0.5 });
      draws = [0.49, 0.5, 0.1];
      const outcomes = [await adapter().healthCheck(), await adapter().healthCheck(), await adapter().healthCheck()].map((r) => r.ok);
      expect(outcomes).toEqual([false, true, false]);
    });

    it('latencyMs delays every answer: slower than the timeout is a timeout', async () => {
      await setFaults('primary', { latencyMs: 50 });
      expect(failure(await adapter('primary', 20).healthCheck()).cause).toBe('timeout');
      // The same delay within a longer timeout is an answer (how long it took is not asserted: wall clock).
      const slow = await adapter('primary', 2_000).healthCheck();
      expect(slow.ok).toBe(true);
      // The simulator answered both calls; only the first client gave up before its answer.
      expect((await callLog('primary')).map((c) => c.outcome)).toEqual(['ok', 'ok']);
    });

    it('faults come before validation: a down provider says nothing about a bad number', async () => {
      await setFaults('primary', { mode: 'error' });
      expect(failure(await adapter().sendSms({ from: PROXY, to: 'bad', text: 'hi' })).cause).toBe('http-5xx');
    });
  });

  it('closes promptly while a request is held by the timeout mode', async () => {
    const config: SimulatorConfig = { port: 0, brokerUrl: 'http://127.0.0.1:9', webhookSecret: 'secret' };
    const own = await createSimulatorApp(config);
    await own.listen(0, '127.0.0.1');
    const ownUrl = (await own.getUrl()).replace('[::1]', '127.0.0.1');
    await fetch(`${ownUrl}/_sim/providers/primary/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"mode":"timeout"}',
    });
    const held = fetch(`${ownUrl}/providers/primary/v1/health`).then(
      () => 'answered',
      () => 'dropped',
    );
    // Until the simulator holds it (bounded: a few hundred polls, then the expectation says so).
    let logged = 0;
    for (let i = 0; i < 400 && logged === 0; i++) {
      logged = ((await (await fetch(`${ownUrl}/_sim/providers/primary/calls`)).json()) as unknown[]).length;
      if (logged === 0) await new Promise((r) => setTimeout(r, 5));
    }
    expect(logged).toBe(1);
    await own.close();
    expect(await held).toBe('dropped');
  });
});
