/**
 * What a replica takes from the persisted breaker state when it may have missed some (docs/operations.md):
 * starting a term of leadership, it keeps its breakers' live counts (every replica counts the cluster's
 * outcomes) and takes a persisted state only where it is a later one (a transition it did not hear of);
 * rejoining the cluster after deciding alone, it takes the cluster's state whole. Real breakers of the
 * library; the repository answers from memory what PostgreSQL would.
 */
import { BehaviorSubject } from 'rxjs';
import { CircuitBreaker, type BreakerSnapshot } from '@app/circuit-breaker';
import { loadConfig } from '../config';
import type { ListenClient } from '../database/listen-client';
import type { BreakerLeadership, Leadership } from './cluster/breaker-leadership';
import type { ProviderAdapters } from './provider-adapters';
import { ProviderBreakers, providerBreakerPolicy, systemBreakerScheduler } from './provider-breakers';
import type { ProviderStateRepository, SavedProviderState } from './provider-state.repository';
import { ProviderStateSync } from './provider-state.sync';

const config = loadConfig({});
const FAILURE = { kind: 'failure', reason: 'primary: HTTP 503', probe: false } as const;

function setUp(saved: () => BreakerSnapshot) {
  const breakers = new ProviderBreakers(config, { names: ['primary'] } as unknown as ProviderAdapters, systemBreakerScheduler());
  const role = new BehaviorSubject<Leadership>({ scope: 'cluster', leader: 'a', fence: null });
  const leadership = {
    replica: 'me',
    get current() {
      return role.value;
    },
    get decidesHere() {
      return role.value.fence !== null || role.value.scope === 'replica';
    },
    changes$: role.asObservable(),
  } as unknown as BreakerLeadership;
  const repository = {
    loadAll: () =>
      Promise.resolve(new Map<string, SavedProviderState>([['primary', { snapshot: saved(), disabled: false, disabledReason: null }]])),
  } as unknown as ProviderStateRepository;
  const listener = { subscribe: () => () => undefined, onReconnect: () => () => undefined } as unknown as ListenClient;
  const sync = new ProviderStateSync(repository, breakers, leadership, listener);
  sync.onApplicationBootstrap();
  const settle = () => new Promise((done) => setTimeout(done, 0));
  return { breakers, role, sync, settle, primary: () => breakers.get('primary').status() };
}

/** A snapshot of the telephony breaker as the former leader persisted it: `apply` says what it saw. */
function persisted(apply: (breaker: CircuitBreaker) => void): BreakerSnapshot {
  const breaker = new CircuitBreaker(providerBreakerPolicy(config.breaker));
  apply(breaker);
  const snapshot = breaker.toJSON();
  breaker.dispose();
  return snapshot;
}

describe('ProviderStateSync', () => {
  it('starting a term of leadership, keeps the live counts when nothing later was persisted', async () => {
    const { breakers, role, sync, settle, primary } = setUp(() => ({ ...breakers.get('primary').toJSON(), consecutiveFailures: 0 }));
    try {
      for (let i = 0; i < 4; i++) breakers.get('primary').record(FAILURE);
      role.next({ scope: 'cluster', leader: 'b', fence: { holder: 'b', epoch: 2 } });
      await settle();
      expect(primary()).toMatchObject({ state: 'CLOSED', consecutiveFailures: 4 });
    } finally {
      sync.onApplicationShutdown();
      breakers.onApplicationShutdown();
    }
  });

  it('starting a term of leadership, takes a later persisted state: a transition it did not hear of', async () => {
    const later = persisted((b) => {
      for (let i = 0; i < 5; i++) b.record(FAILURE);
    });
    const { breakers, role, sync, settle, primary } = setUp(() => ({
      ...later,
      since: primary().since + 1,
      openedAt: primary().since + 1,
    }));
    try {
      role.next({ scope: 'cluster', leader: 'b', fence: { holder: 'b', epoch: 2 } });
      await settle();
      expect(primary()).toMatchObject({ state: 'OPEN', reason: '5 consecutive failures' });
    } finally {
      sync.onApplicationShutdown();
      breakers.onApplicationShutdown();
    }
  });

  it('rejoining the cluster after deciding alone, takes the cluster’s state whole', async () => {
    const { breakers, role, sync, settle, primary } = setUp(() => ({ ...breakers.get('primary').toJSON(), consecutiveFailures: 1 }));
    try {
      role.next({ scope: 'replica', leader: null, fence: null });
      for (let i = 0; i < 3; i++) breakers.get('primary').record(FAILURE);
      role.next({ scope: 'cluster', leader: 'a', fence: null });
      await settle();
      expect(primary()).toMatchObject({ state: 'CLOSED', consecutiveFailures: 1 });
    } finally {
      sync.onApplicationShutdown();
      breakers.onApplicationShutdown();
    }
  });
});
