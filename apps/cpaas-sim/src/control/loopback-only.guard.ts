import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { isIP } from 'node:net';
import type { Request } from 'express';
import type { SimulatorConfig } from '../config/sim-config';
import { SimProblem } from '../problem/sim-problem';
import { SIM_CONFIG } from '../sim-config.token';

/** 127.0.0.0/8, ::1, and IPv4 loopback written as an IPv6-mapped address. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  return address === '::1';
}

/**
 * The control routes switch faults and make providers send webhooks: anyone who reaches them can
 * forge traffic. They answer the simulator's own machine only, unless `SIM_CONTROL_ALLOW_REMOTE=true`
 * (a container whose port is published to the host, where requests arrive from the bridge).
 */
@Injectable()
export class LoopbackOnlyGuard implements CanActivate {
  constructor(@Inject(SIM_CONFIG) private readonly config: SimulatorConfig) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.config.controlAllowRemote) return true;
    const address = context.switchToHttp().getRequest<Request>().socket.remoteAddress;
    if (isLoopback(address)) return true;
    throw new SimProblem(
      403,
      'control-forbidden',
      'Forbidden',
      'The simulator control routes answer loopback clients only (set SIM_CONTROL_ALLOW_REMOTE=true to allow others).',
    );
  }
}
