import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { readLimited } from './read-limited';

/** A provider's answer as undici hands it over: `chunks` written one by one, or the socket cut after them. */
describe('readLimited', () => {
  let server: Server;
  let origin: string;
  let answer: { chunks: string[]; cut?: boolean };
  const agent = new Agent({ keepAliveTimeout: 1_000 });

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      for (const chunk of answer.chunks) res.write(chunk);
      if (answer.cut) res.socket?.destroy();
      else res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await agent.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const read = async (maxBytes: number) => readLimited((await agent.request({ origin, path: '/', method: 'GET' })).body, maxBytes);

  it('reads a whole answer, its chunks in order', async () => {
    answer = { chunks: ['{"a":', '"x', 'y"}'] };
    await expect(read(1024)).resolves.toBe('{"a":"xy"}');
  });

  it('reads an answer of exactly the bound whole, and cuts one a byte longer', async () => {
    answer = { chunks: ['0123456789'] };
    await expect(read(10)).resolves.toBe('0123456789');
    await expect(read(9)).resolves.toBe('');
  });

  it('keeps what came before the chunk that crossed the bound, and the destroyed body raises nothing unheard', async () => {
    answer = { chunks: ['a'.repeat(100), 'b'.repeat(100), 'c'.repeat(100)] };
    const unheard: unknown[] = [];
    const note = (error: unknown) => unheard.push(error);
    process.on('uncaughtException', note);
    try {
      const text = await read(250);
      expect(text.length).toBeLessThanOrEqual(250);
      expect(text.startsWith('a')).toBe(true);
      // The cut body's abort error is emitted after it is destroyed: give it the turns to arrive.
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off('uncaughtException', note);
    }
    expect(unheard).toEqual([]);
  });

  it('rejects when the connection is cut mid-answer', async () => {
    answer = { chunks: ['{"partial'], cut: true };
    await expect(read(1024)).rejects.toThrow();
  });
});
