import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';

export default async function globalTeardown(): Promise<void> {
  const server = globalThis.__testPostgres;
  if (!server) return;
  await server.stop();
  await rm(dirname(server.clusterDir), { recursive: true, force: true });
}
