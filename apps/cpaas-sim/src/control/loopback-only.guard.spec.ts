import type { ExecutionContext } from '@nestjs/common';
import type { SimulatorConfig } from '../config/sim-config';
import { SimProblem } from '../problem/sim-problem';
import { LoopbackOnlyGuard, isLoopback } from './loopback-only.guard';

const config = (controlAllowRemote?: boolean): SimulatorConfig => ({
  port: 0,
  brokerUrl: 'http://127.0.0.1:9',
  webhookSecret: 'x'.repeat(16),
  controlAllowRemote,
});

const from = (remoteAddress: string | undefined) =>
  ({ switchToHttp: () => ({ getRequest: () => ({ socket: { remoteAddress } }) }) }) as unknown as ExecutionContext;

describe('the simulator control routes', () => {
  it.each(['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1'])('answer a loopback client (%s)', (address) => {
    expect(isLoopback(address)).toBe(true);
    expect(new LoopbackOnlyGuard(config()).canActivate(from(address))).toBe(true);
  });

  it.each(['10.0.0.5', '172.17.0.1', '::ffff:192.168.1.2', '2001:db8::1', '128.0.0.1', undefined])(
    'refuse any other client (%s) with a 403 problem',
    (address) => {
      expect(isLoopback(address)).toBe(false);
      let refused: unknown;
      try {
        new LoopbackOnlyGuard(config()).canActivate(from(address));
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(SimProblem);
      expect((refused as SimProblem).toProblem()).toMatchObject({ status: 403, code: 'control-forbidden' });
    },
  );

  it('answer every client when SIM_CONTROL_ALLOW_REMOTE=true', () => {
    expect(new LoopbackOnlyGuard(config(true)).canActivate(from('10.0.0.5'))).toBe(true);
  });
});
