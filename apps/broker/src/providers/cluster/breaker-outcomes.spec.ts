/**
 * Where an outcome goes (docs/operations.md), into the library's real breakers on the system clock (counts only, no
 * time rule): a follower keeps nothing locally and sends its outcomes to the leader in batches; a
 * leader feeds its own breaker and the batches it receives; a replica cut off from the database
 * decides on its own breaker (the 5th failure trips it there), also with a batch it could not send.
 */
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../config';
import type { ChannelHandler, ListenClient } from '../../database/listen-client';
import { ProviderBreakers, systemBreakerScheduler } from '../provider-breakers';
import { ProviderStateRepository } from '../provider-state.repository';
import type { ProviderAdapters } from '../provider-adapters';
import type { BreakerLeadership, Leadership } from './breaker-leadership';
import { BREAKER_OUTCOME_CHANNEL, BreakerOutcomes } from './breaker-outcomes';

const config = loadConfig({ BREAKER_OUTCOME_BATCH_MS: '5' });
const FAILURE = { kind: 'failure', reason: 'primary: HTTP 503', probe: false } as const;

/** One replica: its breakers, its outcome router, the NOTIFYs it sent, and its LISTEN handlers. */
function replica(name: string, leadership: Leadership, send: (payload: string) => Promise<void>) {
  const handlers = new Map<string, ChannelHandler>();
  const listener = { subscribe: (channel: string, handler: ChannelHandler) => (handlers.set(channel, handler), () => undefined) };
  const state = { leadership, unreachable: 0 };
  const lead = {
    replica: name,
    get current() {
      return state.leadership;
    },
    get decidesHere() {
      return state.leadership.fence !== null || state.leadership.scope === 'replica';
    },
    noteUnreachable: () => (state.unreachable += 1),
  } as unknown as BreakerLeadership;
  const breakers = new ProviderBreakers(
    config,
    { names: ['primary', 'failover'] } as unknown as ProviderAdapters,
    systemBreakerScheduler(),
  );
  const dataSource = { query: (_: string, [, payload]: [string, string]) => send(payload) } as unknown as DataSource;
  const outcomes = new BreakerOutcomes(
    config,
    new ProviderStateRepository(dataSource),
    listener as unknown as ListenClient,
    breakers,
    lead,
    systemBreakerScheduler(),
  );
  outcomes.onApplicationBootstrap();
  return { breakers, outcomes, state, deliver: (payload: string) => handlers.get(BREAKER_OUTCOME_CHANNEL)!(payload) };
}

describe('BreakerOutcomes', () => {
  it('trips the leader’s breaker at the 5th failure seen by any replicas, the followers keeping none', async () => {
    const sent: string[] = [];
    const leader = replica('a', { scope: 'cluster', leader: 'a', fence: { holder: 'a', epoch: 1 } }, () => Promise.resolve());
    const follower = replica('b', { scope: 'cluster', leader: 'a', fence: null }, (payload) => {
      sent.push(payload);
      return Promise.resolve();
    });
    try {
      leader.outcomes.record('primary', FAILURE);
      leader.outcomes.record('primary', FAILURE);
      for (let i = 0; i < 3; i++) follower.outcomes.record('primary', FAILURE);
      expect(follower.breakers.get('primary').status().consecutiveFailures).toBe(0);
      expect(leader.breakers.get('primary').status().state).toBe('CLOSED');
      await new Promise((done) => setTimeout(done, 50));
      expect(sent).toHaveLength(1); // one batch of three
      leader.deliver(sent[0]);
      expect(leader.breakers.get('primary').status()).toMatchObject({ state: 'OPEN', reason: '5 consecutive failures' });
      // A follower's own batch echoed back to it is not taken in twice.
      follower.deliver(sent[0]);
      expect(follower.breakers.get('primary').status().state).toBe('CLOSED');
    } finally {
      await leader.outcomes.onApplicationShutdown();
      await follower.outcomes.onApplicationShutdown();
    }
  });

  it('decides on its own breaker when cut off, including a batch it could not send', async () => {
    const cut = replica('c', { scope: 'cluster', leader: 'a', fence: null }, () => Promise.reject(new Error('connection terminated')));
    try {
      for (let i = 0; i < 2; i++) cut.outcomes.record('primary', FAILURE);
      await new Promise((done) => setTimeout(done, 50));
      // The NOTIFY failed: the two are recorded here, and the replica reports itself cut off.
      expect(cut.state.unreachable).toBe(1);
      expect(cut.breakers.get('primary').status().consecutiveFailures).toBe(2);
      cut.state.leadership = { scope: 'replica', leader: null, fence: null };
      for (let i = 0; i < 2; i++) cut.outcomes.record('primary', FAILURE);
      expect(cut.breakers.get('primary').status().state).toBe('CLOSED'); // 4: not yet
      cut.outcomes.record('primary', FAILURE);
      expect(cut.breakers.get('primary').status().state).toBe('OPEN'); // the 5th trips, here
    } finally {
      await cut.outcomes.onApplicationShutdown();
    }
  });
});
