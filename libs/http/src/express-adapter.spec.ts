import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Controller, Get, Module, Req } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Express, Request } from 'express';
import { PrototypedExpressAdapter, withPrototype } from './express-adapter';

@Controller('probe')
class ProbeController {
  @Get()
  probe(@Req() req: Request): { ip: string | undefined; path: string } {
    // Express's own request methods and getters work on the object the server built.
    return { ip: req.ip, path: req.path };
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

describe('PrototypedExpressAdapter', () => {
  let app: NestExpressApplication;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    app = await NestFactory.create<NestExpressApplication>(ProbeModule, new PrototypedExpressAdapter(), {
      logger: false,
      forceCloseConnections: true,
    });
    await app.listen(0, '127.0.0.1');
    server = app.getHttpServer() as Server;
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => app.close());

  it("builds each request and response with Express's prototypes, before Express sees them", async () => {
    const express = app.getHttpAdapter().getInstance() as Express;
    const seen: Array<[object | null, object | null]> = [];
    // Runs before Express's own listener, which would set the prototypes itself.
    const record = (req: IncomingMessage, res: ServerResponse) => seen.push([Object.getPrototypeOf(req), Object.getPrototypeOf(res)]);
    server.prependListener('request', record);
    try {
      const answer = await fetch(`${url}/probe?x=1`);
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ ip: '127.0.0.1', path: '/probe' });
    } finally {
      server.off('request', record);
    }
    expect(seen).toEqual([[express.request, express.response]]);
  });

  it('keeps Nest’s connection tracking: close() ends an idle keep-alive connection', async () => {
    const other = await NestFactory.create<NestExpressApplication>(ProbeModule, new PrototypedExpressAdapter(), {
      logger: false,
      forceCloseConnections: true,
    });
    await other.listen(0, '127.0.0.1');
    const otherServer = other.getHttpServer() as Server;
    const port = (otherServer.address() as AddressInfo).port;
    let connections = 0;
    otherServer.on('connection', () => connections++);
    await (await fetch(`http://127.0.0.1:${port}/probe`)).text();
    const tracked = (other.getHttpAdapter() as unknown as { openConnections: Set<unknown> }).openConnections;
    expect(connections).toBe(1);
    expect(tracked.size).toBe(1);
    await other.close();
    expect(tracked.size).toBe(0);
  });
});

describe('withPrototype', () => {
  it('builds instances of the base class with the given prototype', () => {
    const prototype = Object.create(IncomingMessage.prototype) as object;
    const Built = withPrototype(IncomingMessage, prototype);
    const req = new Built(null as never);
    expect(Object.getPrototypeOf(req)).toBe(prototype);
    expect(req).toBeInstanceOf(IncomingMessage);
    expect(req.headers).toEqual({});
  });

  it('refuses a prototype that does not inherit from the base class', () => {
    expect(() => withPrototype(ServerResponse, Object.create(IncomingMessage.prototype) as object)).toThrow(
      /does not inherit from ServerResponse/,
    );
  });
});
