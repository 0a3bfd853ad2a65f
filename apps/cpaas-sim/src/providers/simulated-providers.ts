import { Inject, Injectable } from '@nestjs/common';
import type { SimulatorConfig } from '../config/sim-config';
import { DEFAULT_FAULTS, type FaultSettings } from '../faults/fault-settings';
import { SimProblem } from '../problem/sim-problem';
import { SIM_CONFIG } from '../sim-config.token';
import { CallLog } from './call-log';

/** One provider the simulator plays. */
export interface SimulatedProvider {
  readonly name: string;
  faults: FaultSettings;
  /** Post delivery receipts (`message.delivered`, `call.completed` for API calls) to the broker. */
  statusWebhooks: boolean;
  readonly calls: CallLog;
}

/** Provider names as the broker's PROVIDERS accepts them. */
const PROVIDER_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const MAX_PROVIDERS = 256;
const STARTING_PROVIDERS = ['primary', 'failover'];

/** Every provider the simulator plays: `primary` and `failover` from the start, others created on first use. */
@Injectable()
export class SimulatedProviders {
  private readonly providers = new Map<string, SimulatedProvider>();

  constructor(@Inject(SIM_CONFIG) private readonly config: SimulatorConfig) {
    for (const name of STARTING_PROVIDERS) this.get(name);
  }

  get(name: string): SimulatedProvider {
    let provider = this.providers.get(name);
    if (!provider) {
      if (!PROVIDER_NAME.test(name))
        throw new SimProblem(
          400,
          'bad-request',
          'Invalid provider name',
          'A provider name is 1 to 32 lowercase letters, digits or dashes, starting with a letter.',
        );
      if (this.providers.size >= MAX_PROVIDERS)
        throw new SimProblem(409, 'too-many-providers', 'Too many providers', `The simulator plays at most ${MAX_PROVIDERS} providers.`);
      provider = {
        name,
        faults: { ...DEFAULT_FAULTS },
        statusWebhooks: this.config.statusWebhooks ?? false,
        calls: new CallLog(this.config.callLogLimit ?? 10_000),
      };
      this.providers.set(name, provider);
    }
    return provider;
  }

  all(): SimulatedProvider[] {
    return [...this.providers.values()];
  }

  /** Back to the start: every provider healthy, logs empty, receipts at their configured default. */
  reset(): void {
    for (const provider of this.providers.values()) {
      provider.faults = { ...DEFAULT_FAULTS };
      provider.statusWebhooks = this.config.statusWebhooks ?? false;
      provider.calls.clear();
    }
  }
}
