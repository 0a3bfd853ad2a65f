/**
 * A TCP proxy of the test suite's own, put between one broker process and PostgreSQL: `cut()` drops
 * every connection through it and refuses new ones (the replica has lost the database), `restore()`
 * lets connections through again. `silence()` stops carrying bytes on the connections open now while
 * keeping them open, as a server host that vanished does (no FIN, no RST); new connections pass.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  cut(): void;
  silence(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let open = true;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (!open) {
      client.destroy();
      return;
    }
    const upstream = connect(targetPort, targetHost);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    client.once('close', () => (pairs.delete(pair), upstream.destroy()));
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('tcp proxy has no port');
  return {
    port: address.port,
    cut: () => {
      open = false;
      for (const socket of sockets) socket.destroy();
    },
    silence: () => {
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      pairs.clear();
    },
    restore: () => {
      open = true;
    },
    close: async () => {
      open = false;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
