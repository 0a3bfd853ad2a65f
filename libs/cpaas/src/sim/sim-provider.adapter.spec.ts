/**
 * Classification of answers the simulator never gives (429, non-JSON, odd 4xx, refused
 * connections), against a tiny local HTTP server. The fault modes themselves are covered against
 * the real simulator in apps/cpaas-sim.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProvider } from '../create-provider';
import { UnknownAdapterError } from '../errors';
import type { CpaasProvider, ProviderResult } from '../provider';

describe('sim adapter classification', () => {
  let server: Server;
  let answer: { status: number; body: string };
  let provider: CpaasProvider;
  let lastPath: string | undefined;

  const failure = <T>(result: ProviderResult<T>) => {
    if (result.ok) throw new Error('expected a failure');
    return result.failure;
  };

  beforeAll(async () => {
    server = createServer((request, response) => {
      lastPath = request.url;
      request.resume();
      request.on('end', () => response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/base/`;
    provider = createProvider({ name: 'edge', adapter: 'sim', baseUrl }, { timeoutMs: 1_000, webhookSecret: 's' });
  });
  afterAll(async () => {
    await provider.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('speaks to the provider under the base URL path', async () => {
    answer = { status: 201, body: '{"messageId":"m1"}' };
    expect(await provider.sendSms({ from: '+2348090000001', to: '+2348030000002', text: 'x' })).toMatchObject({
      ok: true,
      value: { messageId: 'm1' },
    });
    expect(lastPath).toBe('/base/providers/edge/v1/messages');
  });

  it.each([
    [429, '{}', { cause: 'rate-limited', countsAgainstProvider: true }],
    [502, 'Bad Gateway', { cause: 'http-5xx', countsAgainstProvider: true }],
    [200, 'OK', { cause: 'malformed', countsAgainstProvider: true }],
    [201, '{"messageId":42}', { cause: 'malformed', countsAgainstProvider: true }],
    [200, '{"messageId":""}', { cause: 'rejected', countsAgainstProvider: true }],
    [401, '{}', { cause: 'bad-request', countsAgainstProvider: true }],
    [422, '{"detail":"text too long"}', { cause: 'bad-request', countsAgainstProvider: false }],
    [400, '{"code":"invalid-number","detail":"to: not E.164"}', { cause: 'invalid-number', countsAgainstProvider: false }],
  ])('classifies HTTP %i %s', async (status, body, expected) => {
    answer = { status, body };
    expect(failure(await provider.sendSms({ from: '+2348090000001', to: '+2348030000002', text: 'x' }))).toMatchObject({
      ...expected,
      status,
    });
  });

  it('classifies an unknown callee answer as malformed', async () => {
    answer = { status: 201, body: '{"callId":"c1","answer":"voicemail"}' };
    expect(failure(await provider.bridgeCall!({ from: '+2348090000001', to: '+2348030000002' })).cause).toBe('malformed');
  });

  it('classifies a refused connection as a transport failure', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const nobody = createProvider(
      { name: 'gone', adapter: 'sim', baseUrl: `http://127.0.0.1:${port}` },
      { timeoutMs: 1_000, webhookSecret: 's' },
    );
    const result = failure(await nobody.healthCheck());
    await nobody.close();
    expect(result).toEqual({
      countsAgainstProvider: true,
      cause: 'transport',
      reason: 'gone: connection refused (ECONNREFUSED) on health',
    });
  });

  it('refuses an unknown adapter', () => {
    expect(() =>
      createProvider({ name: 'x', adapter: 'plivo' as 'sim', baseUrl: 'http://127.0.0.1:9' }, { timeoutMs: 1, webhookSecret: 's' }),
    ).toThrow(UnknownAdapterError);
  });
});
