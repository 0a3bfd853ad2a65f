/**
 * The benchmark's webhook endpoint, in its own process so that it costs the same for both contenders:
 * answers every POST with 204 on a keep-alive connection. Tells the parent its port, and its request
 * count when asked.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let received = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received += 1;
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on('message', (message: { type: string }) => {
  if (message.type === 'count') process.send?.({ count: received });
  if (message.type === 'stop') server.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
