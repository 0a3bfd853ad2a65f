/** A test server on a free loopback port below 32768, whose close also ends the connections still open. */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { freePortBelow32768 } from './prism';

export async function listenOnLoopback(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const port = await freePortBelow32768();
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
