/**
 * Prism (`@stoplight/prism-cli`, from node_modules) serving a vendor's published OpenAPI
 * description, for tests that check every request an adapter sends against what the vendor
 * publishes. Prism answers the spec's examples, refuses a request that breaks the spec with a 422
 * naming the field, and one without the required auth with a 401. Started on a free port below
 * 32768; ready in about 10 s on this machine.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export const TWILIO_API_SPEC = resolve('node_modules/@twilio-alpha/mcp/twilio-oai/spec/json/twilio_api_v2010.json');
const PRISM_CLI = resolve('node_modules/@stoplight/prism-cli/dist/index.js');

export interface PrismServer {
  url: string;
  /** Everything Prism printed (its validation messages among it). */
  output(): string;
  /** What Prism found wrong with a request or an answer it saw, one line each (validation-proxy mode). */
  violations(): string[];
  close(): Promise<void>;
}

/** Starts Prism's mock server for `specFile`; rejects with its output if it is not listening after `attempts` checks. */
export async function startPrism(specFile: string, attempts = 240): Promise<PrismServer> {
  return start(['mock', '-h', '127.0.0.1', '-p', String(await freePortBelow32768()), specFile], specFile, attempts);
}

/**
 * Prism in validation-proxy mode on `port`: it forwards every request to `upstream` (the path appended) and
 * checks the request and the upstream's answer against `specFile`, logging each violation (the answer is
 * passed on as it came).
 */
export async function startPrismProxy(specFile: string, upstream: string, port: number, attempts = 240): Promise<PrismServer> {
  return start(['proxy', '-h', '127.0.0.1', '-p', String(port), specFile, upstream], specFile, attempts);
}

async function start(args: string[], specFile: string, attempts: number): Promise<PrismServer> {
  const port = args[args.indexOf('-p') + 1];
  const child = spawn(process.execPath, [PRISM_CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const server: PrismServer = {
    url: `http://127.0.0.1:${port}`,
    output: () => out,
    violations: () => out.split('\n').filter((line) => /violation/i.test(line)),
    close: () => stop(child),
  };
  for (let i = 0; i < attempts; i++) {
    if (out.includes('Prism is listening')) return server;
    if (child.exitCode !== null) break;
    await new Promise((done) => setTimeout(done, 250));
  }
  await stop(child);
  throw new Error(`Prism did not start for ${specFile}:\n${out.slice(-2000)}`);
}

/**
 * What Prism said when it refused a request (its `detail` and each `validation` message), or
 * undefined for an answer that is not Prism's own refusal.
 */
export function prismRefusal(status: number, body: string): string | undefined {
  if (status < 400 || status >= 500) return undefined;
  try {
    const problem = JSON.parse(body) as {
      type?: string;
      title?: string;
      detail?: string;
      validation?: Array<{ message?: string; location?: string[] }>;
    };
    if (!problem.type?.includes('stoplight.io/prism')) return undefined;
    const fields = (problem.validation ?? []).map((v) => `${(v.location ?? []).join('.')}: ${v.message}`);
    return `Prism ${status} ${problem.title ?? ''}: ${problem.detail ?? ''}${fields.length ? ` [${fields.join('; ')}]` : ''}`;
  } catch {
    return undefined;
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** A port in 20000–32767 that nothing listens on now (the test machine's rule: below 32768). */
export async function freePortBelow32768(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    const free = await new Promise<boolean>((done) => {
      const server = createServer();
      server.once('error', () => done(false));
      server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port below 32768');
}
