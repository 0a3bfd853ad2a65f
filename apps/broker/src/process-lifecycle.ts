/**
 * What an entry point does around its apps: listen with a one-line reason when it cannot, and stop
 * what it started (newest first) on SIGINT/SIGTERM or a failed start, then exit. Shared by the
 * production entry point (`main.ts`) and `npm start`'s launcher (apps/local).
 */
import type { INestApplication } from '@nestjs/common';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on `host:port`; a port taken or refused, or an address not this machine's, says which variable to change. */
export async function listen(app: INestApplication, host: string, port: number, variable: string): Promise<void> {
  try {
    await app.listen(port, host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(`port ${port} is already in use (set ${variable} to another port)`);
    if (code === 'EACCES') throw new Error(`not allowed to listen on port ${port} (set ${variable} to another port)`);
    if (code === 'EADDRNOTAVAIL') throw new Error(`address ${host} is not one of this machine's (set HOST to another address)`);
    throw error;
  }
}

/** The address the server really listens on, as a URL. */
export function listeningUrl(app: INestApplication): string {
  const address = (app.getHttpServer() as Server).address() as AddressInfo;
  return `http://${urlHost(address.address)}:${address.port}`;
}

/** A host as it is written in a URL: an IPv6 address in brackets. */
export function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * The things a process started, stopped newest first when it is told to stop or its start fails.
 * A second signal exits at once; a stop that fails is said in one line and makes the exit code 1.
 */
export class ProcessLifecycle {
  private readonly started: Array<{ name: string; stop: () => Promise<void> }> = [];
  private stopping = false;

  constructor(private readonly processName: string) {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        if (this.stopping) {
          console.error(`${this.processName}: second signal, exiting now`);
          process.exit(1);
        }
        void this.stop(0);
      });
    }
  }

  /** Says how to stop what was just started: before everything started earlier. */
  onStop(name: string, stop: () => Promise<void>): void {
    this.started.unshift({ name, stop });
  }

  /** Runs `start`; a failure is one line on stderr, then what was started is stopped and the exit code is 1. */
  run(start: () => Promise<void>): void {
    start().catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      console.error(`${this.processName}: cannot start: ${message}`);
      void this.stop(1);
    });
  }

  private async stop(exitCode: number): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const { name, stop } of this.started) {
      try {
        await stop();
      } catch (error) {
        console.error(`${this.processName}: stopping the ${name} failed: ${(error as Error).message}`);
        exitCode = exitCode || 1;
      }
    }
    process.exit(exitCode);
  }
}
