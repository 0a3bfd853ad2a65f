import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Response } from 'express';

/**
 * Requests the simulator is sitting on: delayed by `latencyMs`, or held forever by `timeout`.
 * Each is let go when its client gives up; at shutdown every one is dropped (socket destroyed),
 * so closing the app never waits on a request that would never be answered.
 */
@Injectable()
export class HeldRequests implements OnModuleDestroy {
  private readonly held = new Map<Response, () => void>();
  private closing = false;

  /** Resolves true after `ms`; false (and the request is dropped) if the client left or we are closing. */
  delay(response: Response, ms: number): Promise<boolean> {
    if (this.closing || isGone(response)) {
      drop(response);
      return Promise.resolve(false);
    }
    return new Promise((resolve) => {
      const finish = (answer: boolean): void => {
        clearTimeout(timer);
        response.off('close', onClose);
        this.held.delete(response);
        resolve(answer);
      };
      const onClose = (): void => finish(false);
      const timer = setTimeout(() => finish(true), ms);
      response.on('close', onClose);
      this.held.set(response, () => {
        finish(false);
        drop(response);
      });
    });
  }

  /** Never answers; the request stays until its client gives up or the app closes. */
  hold(response: Response): void {
    if (this.closing || isGone(response)) {
      drop(response);
      return;
    }
    const onClose = (): void => {
      this.held.delete(response);
    };
    response.once('close', onClose);
    this.held.set(response, () => {
      response.off('close', onClose);
      this.held.delete(response);
      drop(response);
    });
  }

  get size(): number {
    return this.held.size;
  }

  onModuleDestroy(): void {
    this.closing = true;
    for (const release of [...this.held.values()]) release();
  }
}

function isGone(response: Response): boolean {
  return !response.socket || response.socket.destroyed;
}

/** Ends a request the way a dead provider does: the connection just goes away. */
export function drop(response: Response): void {
  response.socket?.destroy();
}
