/**
 * What a create cannot cost less than on this machine, measured in the same run: the CPU per request of
 * the parts any broker needs besides PostgreSQL's allocation, each done the cheapest way there is.
 *
 *   http   the load generator's POST of a create body to a bare `node:http` server (its own process) that
 *          parses the JSON and answers 201 with a session-sized JSON: HTTP in and out, nothing else
 *   bind   the load generator's POST of a bind straight to the simulator (no broker): the provider call
 *          as the simulator answers it, with the cheapest client
 *
 * With the minimal allocation SQL (PostgreSQL plus its client, from the SQL phases), these give the
 * ceiling of the broker ÷ minimal SQL ratio: the ratio a broker would reach if it added no CPU of its own
 * to those three parts (`ceiling`). Where the ceiling is near the target, the target cannot be met here by
 * any broker; the gap between the ceiling and the measured ratio is the broker's own cost.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { simApiPath } from '@app/cpaas';
import { load } from '../support/load';
import { ownCpuMs, processCpuMs } from '../support/cpu';
import { ratio, round } from '../support/stats';

/** A bare HTTP server: reads the JSON body, answers 201 with a JSON the size of a session. Prints its port. */
const BARE_SERVER = `
const http = require('node:http');
const { randomUUID } = require('node:crypto');
const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    const asked = JSON.parse(body);
    const now = new Date();
    const out = JSON.stringify({
      id: randomUUID(), channel: asked.channel, status: 'active', provider: 'primary', proxyNumber: '+2349030000001',
      participants: asked.participants.map((p) => p.number), callbackUrl: null, metadata: {},
      createdAt: now.toISOString(), expiresAt: new Date(now.getTime() + 3600000).toISOString(),
    });
    res.writeHead(201, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
`;

export interface FloorOptions {
  connections: number;
  amount: number;
  /** A create's body, as the broker phases send it. */
  createBody: () => string;
  simUrl: string;
  simPid: number;
  provider: string;
  /** The provider's pool numbers (the simulator binds only its own). */
  proxyNumbers: string[];
  /** Fresh participants per bind. */
  freshPair: () => [string, string];
  /** CPU ms per minimal allocation: PostgreSQL and the SQL client (the load generator of the SQL phases). */
  sqlCpu: { postgres: number; loadGenerator: number };
  /** Broker creates/s ÷ minimal SQL, measured: with the bind, and without a provider call. */
  measured: { withBind: number; noProviderCall: number };
}

async function perRequestCpu(serverPid: number, run: () => Promise<number>) {
  const server0 = processCpuMs(serverPid);
  const own0 = ownCpuMs();
  const answered = await run();
  return {
    server: round((processCpuMs(serverPid) - server0) / answered, 3),
    loadGenerator: round((ownCpuMs() - own0) / answered, 3),
  };
}

export async function floors(options: FloorOptions) {
  const child = spawn(process.execPath, ['-e', BARE_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  let port = '';
  try {
    for await (const chunk of child.stdout) {
      port += String(chunk);
      if (port.includes('\n')) break;
    }
    const bareUrl = `http://127.0.0.1:${port.trim()}`;
    const oneRun = async (url: string, path: string, body: () => string, status: number) => {
      const result = await load({
        url,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        connections: options.connections,
        amount: options.amount,
      });
      if (result.statuses[status] !== options.amount) throw new Error(`floor ${url}${path}: ${JSON.stringify(result.statuses)}`);
      return options.amount;
    };
    // Warm both, then measure.
    await oneRun(bareUrl, '/', options.createBody, 201);
    const http = await perRequestCpu(child.pid!, () => oneRun(bareUrl, '/', options.createBody, 201));
    let next = 0;
    const bindBody = () =>
      JSON.stringify({
        sessionId: randomUUID(),
        proxyNumber: options.proxyNumbers[next++ % options.proxyNumbers.length],
        participants: options.freshPair(),
      });
    const bindPath = `${simApiPath(options.provider)}/bindings`;
    await oneRun(options.simUrl, bindPath, bindBody, 201);
    const bind = await perRequestCpu(options.simPid, () => oneRun(options.simUrl, bindPath, bindBody, 201));

    const sql = options.sqlCpu.postgres + options.sqlCpu.loadGenerator;
    const httpAll = http.server + http.loadGenerator;
    const bindAll = bind.server + bind.loadGenerator;
    return {
      how: 'CPU ms per request from /proc, same run: a bare node:http server answering a create-sized 201, and a bind sent straight to the simulator, each driven by the same load generator as the broker phases',
      cpuMsPerRequest: {
        http: { server: http.server, loadGenerator: http.loadGenerator },
        bind: { simulator: bind.server, loadGenerator: bind.loadGenerator },
        sqlMinimal: { postgres: options.sqlCpu.postgres, loadGenerator: options.sqlCpu.loadGenerator },
      },
      // A broker that added nothing to these parts: minimal SQL's CPU over the sum of the parts.
      ceiling: {
        withBind: ratio(sql, sql + httpAll + bindAll),
        noProviderCall: ratio(sql, sql + httpAll),
      },
      measured: options.measured,
      // How much of the ceiling the broker reaches: what is left is the broker's own CPU.
      measuredVsCeiling: {
        withBind: ratio(options.measured.withBind, sql / (sql + httpAll + bindAll)),
        noProviderCall: ratio(options.measured.noProviderCall, sql / (sql + httpAll)),
      },
    };
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}
