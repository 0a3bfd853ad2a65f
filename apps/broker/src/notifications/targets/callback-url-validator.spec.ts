import type { BrokerConfig } from '../../config';
import { CallbackUrlValidator } from './callback-url-validator';

const validator = (allowPrivateTargets: boolean) =>
  new CallbackUrlValidator({ notifications: { allowPrivateTargets } } as unknown as BrokerConfig);

function refusal(run: () => void): string {
  try {
    run();
  } catch (error) {
    return JSON.stringify((error as { getResponse?: () => unknown }).getResponse?.() ?? error);
  }
  return 'accepted';
}

describe('CallbackUrlValidator', () => {
  it('names the setting that would allow a private target, and only for an address refusal', () => {
    expect(refusal(() => validator(false).assertAcceptable('http://127.0.0.1:4000/hooks'))).toContain(
      'must point to a public address: the host is a loopback address (WEBHOOK_ALLOW_PRIVATE_TARGETS=true allows',
    );
    expect(refusal(() => validator(false).assertAcceptable('ftp://example.com/hooks'))).not.toContain('WEBHOOK_ALLOW_PRIVATE_TARGETS');
    expect(refusal(() => validator(true).assertAcceptable('http://127.0.0.1:4000/hooks'))).toBe('accepted');
  });
});
