import { Inject, Injectable } from '@nestjs/common';
import { ValidationProblem } from '../../common/problem';
import { BROKER_CONFIG, type BrokerConfig } from '../../config';
import { callbackUrlProblem } from './target-policy';

const PRIVATE_TARGETS_HINT = 'WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows loopback and private addresses, for development';

/**
 * The registration check of callback URLs (a session's `callbackUrl`, an account's default), with the
 * broker's WEBHOOK_ALLOW_PRIVATE_TARGETS setting. A refused URL is a 400 problem naming the field.
 */
@Injectable()
export class CallbackUrlValidator {
  private readonly allowPrivateTargets: boolean;
  private readonly minPort: number;

  constructor(@Inject(BROKER_CONFIG) config: BrokerConfig) {
    this.allowPrivateTargets = config.notifications.allowPrivateTargets;
    this.minPort = config.notifications.minPort;
  }

  /** Why the URL is refused, or null. */
  problem(url: string): string | null {
    return callbackUrlProblem(url, { allowPrivateTargets: this.allowPrivateTargets, minPort: this.minPort });
  }

  /** Throws a ValidationProblem naming `field` when the URL is refused, and the setting that would allow a private target. */
  assertAcceptable(url: string, field = 'callbackUrl'): void {
    const problem = this.problem(url);
    if (!problem) return;
    const hint = callbackUrlProblem(url, { allowPrivateTargets: true }) === null ? ` (${PRIVATE_TARGETS_HINT})` : '';
    throw new ValidationProblem([{ field, message: `${problem}${hint}` }]);
  }
}
