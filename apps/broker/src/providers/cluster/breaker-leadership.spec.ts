/**
 * The breaker lease as a replica holds it (claims driven by hand, the repository scripted): a claim that fails
 * once stops a leader leading at once, but only two in a row make a replica decide alone ("scope": "replica"),
 * so an answer that came late once neither costs a follower its place in the cluster nor puts it in charge.
 */
import { Subject } from 'rxjs';
import { loadConfig } from '../../config';
import type { ListenClient } from '../../database/listen-client';
import type { LeaseHolder, ProviderStateRepository } from '../provider-state.repository';
import { BreakerLeadership } from './breaker-leadership';

function replicaWith(answers: Array<LeaseHolder | 'fails'>) {
  const repository = {
    claimLease: (_name: string, holder: string) => {
      const next = answers.shift() ?? 'fails';
      if (next === 'fails') return Promise.reject(new Error('Connection terminated unexpectedly'));
      return Promise.resolve(next.holder === 'me' ? { ...next, holder } : next);
    },
    releaseLease: () => Promise.resolve(),
  } as unknown as ProviderStateRepository;
  const listener = { start: () => Promise.resolve(), connected$: new Subject<void>(), connected: true } as unknown as ListenClient;
  const leadership = new BreakerLeadership(loadConfig({ BREAKER_HEALTH_INTERVAL_MS: '2000' }), repository, listener);
  return leadership;
}

const LEADING: LeaseHolder = { holder: 'me', epoch: 3, live: true };
const FOLLOWING: LeaseHolder = { holder: 'host:1:abcd', epoch: 3, live: true };

describe('BreakerLeadership', () => {
  it('a leader whose claim fails once stops leading at once, stays in the cluster, and leads again on the next claim', async () => {
    const leadership = replicaWith([LEADING, 'fails', LEADING]);
    await leadership.claim();
    expect(leadership.current).toMatchObject({ scope: 'cluster', fence: { epoch: 3 } });
    await leadership.claim();
    expect(leadership.current).toMatchObject({ scope: 'cluster', fence: null });
    expect(leadership.decidesHere).toBe(false);
    await leadership.claim();
    expect(leadership.current).toMatchObject({ scope: 'cluster', fence: { epoch: 3 } });
  });

  it('a follower whose claim fails once still follows the leader; twice in a row, it decides alone until a claim succeeds', async () => {
    const leadership = replicaWith([FOLLOWING, 'fails', FOLLOWING, 'fails', 'fails', FOLLOWING]);
    await leadership.claim();
    expect(leadership.current).toEqual({ scope: 'cluster', leader: 'host:1:abcd', fence: null });
    await leadership.claim(); // one failure
    expect(leadership.current).toEqual({ scope: 'cluster', leader: 'host:1:abcd', fence: null });
    await leadership.claim(); // answered: the count starts again
    await leadership.claim(); // one failure
    expect(leadership.current.scope).toBe('cluster');
    await leadership.claim(); // two in a row
    expect(leadership.current).toEqual({ scope: 'replica', leader: null, fence: null });
    expect(leadership.decidesHere).toBe(true);
    await leadership.claim();
    expect(leadership.current).toEqual({ scope: 'cluster', leader: 'host:1:abcd', fence: null });
  });
});
