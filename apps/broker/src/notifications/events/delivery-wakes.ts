/**
 * Waking the delivery workers after a commit. An outbox write (EventOutbox, the create's activation) records its
 * event and delivery without a NOTIFY; once its transaction has committed, the caller sends `NOTIFY
 * webhook_delivery` with each distinct delivery URL, as a statement of its own, which every replica's worker
 * hears through its LISTEN.
 *
 * Why not inside the transaction: a transaction that has called `pg_notify` takes PostgreSQL's database-wide
 * NOTIFY lock in its pre-commit and holds it through its commit, WAL flush included, so such commits run one
 * at a time (pgbench, 16 clients: 2 300–2 480 tps with the NOTIFY in the transaction, 6 100–6 200 without). A
 * NOTIFY sent on its own writes no WAL and waits for no flush. Should it fail or be lost, the delivery is
 * committed all the same and the workers' poll (WEBHOOK_POLL_INTERVAL_MS) sends it.
 */
import type { DataSource, EntityManager } from 'typeorm';
import { preparedStatement, runPrepared, type StatementRunner } from '@app/database';
import { DELIVERY_CHANNEL } from '../delivery/delivery-store';

/** One URL: the create's case, parsed once per connection. */
const WAKE_ONE = preparedStatement('delivery.wake', `/* delivery.wake */ SELECT pg_notify($1, $2)`);
/** Several distinct URLs (a sweep that expired many sessions): one statement, one notification each. */
const WAKE_EACH = preparedStatement(
  'delivery.wake_each',
  `/* delivery.wake_each */ SELECT pg_notify($1, url) FROM unnest($2::text[]) AS url`,
);

/** Where a failed wake is told: a Logger's `warn` of the repository or service that owns the transaction. */
export type WakeWarning = (message: string) => void;

/** The delivery URLs one transaction recorded, to wake once each after it commits. */
export class DeliveryWakes {
  private readonly urls = new Set<string>();

  /** Notes a recorded delivery's URL; null (nothing to deliver) is ignored. */
  add(url: string | null): void {
    if (url !== null) this.urls.add(url);
  }

  get size(): number {
    return this.urls.size;
  }

  /**
   * Wakes the workers for every URL noted, after the commit, on `runner` (a DataSource: a statement outside
   * any transaction). Never rejects: a failure is told to `warn` with the URLs' hosts only (a URL's path or
   * query may carry a token), and the poll sends those deliveries.
   */
  async send(runner: StatementRunner, warn: WakeWarning): Promise<void> {
    if (this.urls.size === 0) return;
    const urls = [...this.urls];
    try {
      if (urls.length === 1) await runPrepared(runner, WAKE_ONE, [DELIVERY_CHANNEL, urls[0]]);
      else await runPrepared(runner, WAKE_EACH, [DELIVERY_CHANNEL, urls]);
    } catch (error) {
      const hosts = [...new Set(urls.map(hostOf))].join(', ');
      warn(
        `could not wake the webhook delivery workers for ${hosts} after the commit (${(error as Error).message}); ` +
          `the poll sends ${urls.length === 1 ? 'that delivery' : 'those deliveries'}`,
      );
    }
  }
}

/**
 * Sends the wakes of a transaction someone else ran, once it has committed, on a pooled connection: for a caller that
 * keeps no connection of its own (the breaker's ops webhook, told of a committed transition by an event).
 */
export class DeliveryWaker {
  constructor(private readonly dataSource: DataSource) {}

  /** As `DeliveryWakes.send`: never rejects; a failure is told to `warn` and the poll sends those deliveries. */
  wake(wakes: DeliveryWakes, warn: WakeWarning): Promise<void> {
    return wakes.send(this.dataSource, warn);
  }
}

/**
 * Runs `work` in one transaction of `dataSource` (as `dataSource.transaction` does), then, once it has
 * committed, wakes the workers for the deliveries it recorded in `wakes`, on the same connection before it
 * goes back to the pool (so the wake never queues for another one). A transaction that fails wakes nobody
 * (its deliveries do not exist).
 */
export async function transactionThenWake<T>(
  dataSource: DataSource,
  warn: WakeWarning,
  work: (manager: EntityManager, wakes: DeliveryWakes) => Promise<T>,
): Promise<T> {
  const wakes = new DeliveryWakes();
  const runner = dataSource.createQueryRunner();
  try {
    let result: T;
    try {
      await runner.startTransaction();
      result = await work(runner.manager, wakes);
      await runner.commitTransaction();
    } catch (error) {
      // As dataSource.transaction: the error that failed the work is the one thrown, whatever the rollback does.
      await runner.rollbackTransaction().catch(() => undefined);
      throw error;
    }
    await wakes.send(runner, warn);
    return result;
  } finally {
    await runner.release();
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an unparsable URL';
  }
}
