import { jest } from '@jest/globals';
import fc from 'fast-check';
import type { BrokerConfig } from '../config';
import { LoadOrder, PoolUsage } from './pool-usage';
import type { PoolUsageRows, ProxyNumberRepository } from '../numbers/proxy-number.repository';

/** What the allocator was given before: a Map's entries sorted by load (stable: equal loads in insertion order). */
class SortedMapReference {
  private readonly load = new Map<string, number>();

  constructor(loads: Array<[string, number]>) {
    for (const [id, load] of loads) this.load.set(id, load);
  }

  add(id: string): void {
    this.load.set(id, (this.load.get(id) ?? 0) + 1);
  }

  ids(): string[] {
    return [...this.load.entries()].sort((a, b) => a[1] - b[1]).map(([id]) => id);
  }
}

describe('LoadOrder', () => {
  it('orders least loaded first, equal loads in the order first counted', () => {
    const order = new LoadOrder([
      ['a', 2],
      ['b', 1],
      ['c', 2],
      ['d', 0],
    ]);
    expect(order.ids()).toEqual(['d', 'b', 'a', 'c']);
    order.add('b');
    expect(order.ids()).toEqual(['d', 'a', 'b', 'c']);
    order.add('e');
    expect(order.ids()).toEqual(['d', 'e', 'a', 'b', 'c']);
    order.add('d');
    expect(order.ids()).toEqual(['d', 'e', 'a', 'b', 'c']);
    order.add('d');
    expect(order.ids()).toEqual(['e', 'a', 'b', 'c', 'd']);
  });

  it('hands out a copy: a later reservation does not reorder what a create already took', () => {
    const order = new LoadOrder([
      ['a', 0],
      ['b', 0],
    ]);
    const taken = order.ids();
    order.add('a');
    expect(taken).toEqual(['a', 'b']);
    expect(order.ids()).toEqual(['b', 'a']);
  });

  it('gives, after any read and reservations, the order a sort of every count gives', () => {
    const id = fc.constantFrom(...'abcdefghijklmnop'.split(''));
    fc.assert(
      fc.property(fc.array(fc.tuple(id, fc.nat(6))), fc.array(id, { maxLength: 60 }), (read, reservations) => {
        const order = new LoadOrder(read);
        const reference = new SortedMapReference(read);
        expect(order.ids()).toEqual(reference.ids());
        for (const reserved of reservations) {
          order.add(reserved);
          reference.add(reserved);
          expect(order.ids()).toEqual(reference.ids());
        }
      }),
      { seed: 19, numRuns: 500 },
    );
  });
});

describe('PoolUsage: its schedule', () => {
  const calls: string[] = [];
  const repository = {
    poolUsage: async (): Promise<PoolUsageRows> => {
      calls.push('read');
      return { numbers: [], perNumber: [], perChannels: [] };
    },
    foldPoolLoad: async (): Promise<void> => void calls.push('fold'),
  } as unknown as ProxyNumberRepository;
  const config = (poolUsageRefreshMs: number) =>
    ({ sessions: { poolUsageRefreshMs, sweepIntervalMs: 10_000, numberQuarantineSeconds: 86_400 } }) as unknown as BrokerConfig;

  beforeEach(() => {
    calls.length = 0;
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  });
  afterEach(() => jest.useRealTimers());

  it('reads every POOL_USAGE_REFRESH_MS (the read folds the load changes first)', async () => {
    const usage = new PoolUsage(repository, config(5_000));
    await usage.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(4_999);
    expect(calls).toEqual(['read']);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toEqual(['read', 'read']);
    await usage.onApplicationShutdown();
  });

  it('with POOL_USAGE_REFRESH_MS=0 reads at start only, and still folds the load changes on the sweeper’s cadence', async () => {
    const usage = new PoolUsage(repository, config(0));
    await usage.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(9_999);
    expect(calls).toEqual(['read']);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toEqual(['read', 'fold']);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(calls).toEqual(['read', 'fold', 'fold']);
    await usage.onApplicationShutdown();
  });
});

describe('PoolUsage: the load order, per provider', () => {
  const rows: PoolUsageRows = {
    numbers: [],
    perNumber: [
      { provider: 'primary', proxy_number_id: 'p1', active: 3 },
      { provider: 'failover', proxy_number_id: 'f1', active: 0 },
      { provider: 'primary', proxy_number_id: 'p2', active: 1 },
      { provider: 'failover', proxy_number_id: 'f2', active: 2 },
      { provider: 'primary', proxy_number_id: 'p3', active: 1 },
    ],
    perChannels: [],
  };
  const repository = { poolUsage: async () => rows, foldPoolLoad: async () => undefined } as unknown as ProxyNumberRepository;
  const config = {
    sessions: { poolUsageRefreshMs: 5_000, sweepIntervalMs: 10_000, numberQuarantineSeconds: 0 },
  } as unknown as BrokerConfig;

  it('names only the provider’s numbers, least loaded first, in the order one sort of every count gives them', async () => {
    const usage = new PoolUsage(repository, config);
    await usage.refresh();
    expect(usage.loadOrder('primary')).toEqual(['p2', 'p3', 'p1']);
    expect(usage.loadOrder('failover')).toEqual(['f1', 'f2']);
    expect(usage.loadOrder('nigeria')).toEqual([]);
  });

  it('moves a reserved number within its provider’s order only, and starts an order for a provider it had not read', async () => {
    const usage = new PoolUsage(repository, config);
    await usage.refresh();
    usage.noteReserved('primary', 'p2');
    usage.noteReserved('nigeria', 'n1');
    expect(usage.loadOrder('primary')).toEqual(['p3', 'p2', 'p1']);
    expect(usage.loadOrder('failover')).toEqual(['f1', 'f2']);
    expect(usage.loadOrder('nigeria')).toEqual(['n1']);
    await usage.refresh();
    expect(usage.loadOrder('primary')).toEqual(['p2', 'p3', 'p1']);
    expect(usage.loadOrder('nigeria')).toEqual([]);
  });
});
