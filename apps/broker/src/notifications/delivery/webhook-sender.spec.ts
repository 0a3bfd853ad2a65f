import { spawn } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { connect, createServer, type Socket } from 'node:net';
import { HOSTILE_URLS, WebhookReceiver } from '@app/testing';
import { MAX_RESPONSE_READ_BYTES, WebhookSender, type SenderSettings } from './webhook-sender';

const settings: SenderSettings = { connectTimeoutMs: 5_000, attemptTimeoutMs: 15_000, allowPrivateTargets: true };
const body = JSON.stringify({ id: 'evt_1', type: 'session.created', timestamp: '2026-07-15T12:00:00.000Z', data: {} });

describe('WebhookSender: one attempt', () => {
  let receiver: WebhookReceiver;
  const senders: WebhookSender[] = [];
  const sender = (overrides: Partial<SenderSettings> = {}): WebhookSender => {
    const s = new WebhookSender({ ...settings, ...overrides });
    senders.push(s);
    return s;
  };

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });
  afterEach(async () => {
    await Promise.all(senders.splice(0).map((s) => s.close()));
    await receiver.close();
  });

  it.each([200, 201, 204, 299])('counts %i as delivered, and sends the body and headers as given', async (status) => {
    receiver.answer = () => ({ status });
    const result = await sender().send({ url: receiver.url, body, headers: { 'webhook-id': 'dlv_1' } });
    expect(result).toMatchObject({ delivered: true, statusCode: status, error: null, aborted: false });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(receiver.received[0].body).toBe(body);
    expect(receiver.received[0].headers).toMatchObject({ 'webhook-id': 'dlv_1', 'content-type': 'application/json' });
  });

  it.each([
    [404, 'HTTP 404'],
    [429, 'HTTP 429'],
    [500, 'HTTP 500'],
    [503, 'HTTP 503'],
    [400, 'HTTP 400'],
  ])('counts %i as a failure', async (status, error) => {
    receiver.answer = () => ({ status });
    expect(await sender().send({ url: receiver.url, body, headers: {} })).toMatchObject({ delivered: false, statusCode: status, error });
  });

  it('does not follow a redirect: a 3xx is a failure and the target is never called', async () => {
    receiver.answer = (req) => (req.path === '/elsewhere' ? { status: 200 } : { status: 302, headers: { location: '/elsewhere' } });
    const result = await sender().send({ url: receiver.url, body, headers: {} });
    expect(result).toMatchObject({ delivered: false, statusCode: 302, error: 'HTTP 302: redirects are not followed' });
    expect(receiver.received.map((r) => r.path)).toEqual(['/hooks']);
  });

  it('reads at most 64 KB of the answer: a 2xx with a huge body is delivered and the rest is never read', async () => {
    const total = 64 * 1024 * 1024;
    let written = 0;
    receiver.answer = () => (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
      const chunk = Buffer.alloc(MAX_RESPONSE_READ_BYTES, 'x');
      const pump = (): void => {
        while (written < total && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => undefined);
      pump();
    };
    const result = await sender().send({ url: receiver.url, body, headers: {} });
    expect(result).toMatchObject({ delivered: true, statusCode: 200 });
    expect(written).toBeLessThan(total);
  });

  it('a 2xx whose body never ends is still delivered: only the status counts', async () => {
    receiver.answer = () => (res: ServerResponse) => {
      res.writeHead(200);
      res.write('partial');
    };
    expect(await sender({ attemptTimeoutMs: 200 }).send({ url: receiver.url, body, headers: {} })).toMatchObject({
      delivered: true,
      statusCode: 200,
    });
  });

  it('gives an attempt its time and no more (shortened here)', async () => {
    receiver.answer = () => new Promise(() => undefined);
    const result = await sender({ attemptTimeoutMs: 200 }).send({ url: receiver.url, body, headers: {} });
    expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'timeout after 200 ms', aborted: false });
  });

  it('says so when nobody listens', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    expect(await sender().send({ url: `http://127.0.0.1:${port}/`, body, headers: {} })).toMatchObject({
      delivered: false,
      error: 'connection refused',
    });
  });

  it('gives up connecting after the connect timeout: a listener that accepts no connection', async () => {
    // A listener in a stopped process: the kernel queues a connection or two, then drops further SYNs, so a
    // connect neither succeeds nor is refused. Only the connect timeout ends it.
    const child = spawn(
      process.execPath,
      [
        '-e',
        "const s = require('net').createServer(); s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => { process.stdout.write(String(s.address().port) + '\\n', () => process.kill(process.pid, 'SIGSTOP')); });",
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const fillers: Socket[] = [];
    try {
      const port = await new Promise<number>((resolve) =>
        child.stdout.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim()))),
      );
      // Fill the accept queue (nobody takes from it).
      for (let i = 0; i < 4; i++) fillers.push(connect(port, '127.0.0.1').on('error', () => undefined));
      const result = await sender({ connectTimeoutMs: 300 }).send({ url: `http://127.0.0.1:${port}/`, body, headers: {} });
      expect(result).toMatchObject({ delivered: false, statusCode: null, error: 'connect timeout after 300 ms', aborted: false });
    } finally {
      for (const socket of fillers) socket.destroy();
      child.kill('SIGKILL');
    }
  });

  it('an attempt aborted by shutdown is marked aborted (it does not count)', async () => {
    receiver.answer = () => new Promise(() => undefined);
    const controller = new AbortController();
    const pending = sender().send({ url: receiver.url, body, headers: {}, signal: controller.signal });
    await receiver.waitFor(1);
    controller.abort();
    expect(await pending).toMatchObject({ delivered: false, aborted: true });
  });
});

describe('WebhookSender: public addresses only', () => {
  let receiver: WebhookReceiver;
  let strict: WebhookSender;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    strict = new WebhookSender({ ...settings, allowPrivateTargets: false });
  });
  afterAll(async () => {
    await strict.close();
    await receiver.close();
  });

  it('refuses every hostile URL at send time too, and every spelling of our own loopback receiver, without connecting', async () => {
    const port = receiver.port;
    const loopbackSpellings = [
      '127.0.0.1',
      '127.1',
      '2130706433',
      '017700000001',
      '0x7f000001',
      '0x7f.0.0.1',
      '0',
      '0.0.0.0',
      'localhost',
      'localhost.',
      '[::ffff:127.0.0.1]',
      '[::1]',
    ];
    const urls = [...HOSTILE_URLS, ...loopbackSpellings.map((host) => `http://${host}:${port}/hooks`)];
    const results = await Promise.all(urls.map((url) => strict.send({ url, body, headers: {} })));
    expect(results.filter((r) => r.delivered || !r.error?.startsWith('refused'))).toEqual([]);
    expect(receiver.connections).toBe(0);
  });

  it('checks the resolved address at connect time: a public name that resolves to 127.0.0.1 is refused', async () => {
    const rebinding = new WebhookSender({
      ...settings,
      allowPrivateTargets: false,
      resolver: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    try {
      const result = await rebinding.send({ url: `http://hooks.example.com:${receiver.port}/hooks`, body, headers: {} });
      expect(result).toMatchObject({ delivered: false, error: 'refused: hooks.example.com resolves to a loopback address' });
      expect(receiver.connections).toBe(0);
    } finally {
      await rebinding.close();
    }
  });

  it('connects where the (injected) DNS says: the same name is delivered when private targets are allowed', async () => {
    const resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const loose = new WebhookSender({ ...settings, allowPrivateTargets: true, resolver });
    try {
      expect(await loose.send({ url: `http://hooks.example.com:${receiver.port}/hooks`, body, headers: {} })).toMatchObject({
        delivered: true,
      });
    } finally {
      await loose.close();
    }
  });

  it('trusts the operator’s ops URL (configuration, not customer input)', async () => {
    expect(await strict.send({ url: receiver.url, body, headers: {}, trusted: true })).toMatchObject({ delivered: true });
  });
});
