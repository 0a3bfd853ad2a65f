/**
 * The SQL of the delivery worker. Every time is the worker's clock, passed in; nothing here reads now().
 *
 * Replicas share the work by endpoint: a replica acquires an endpoint (`owner`, `lease_until`, claimed with
 * FOR UPDATE SKIP LOCKED so two replicas never take the same one) and alone sends that endpoint's due
 * deliveries until it has none left, then releases it. A replica that dies holds its endpoints only until
 * their lease runs out; their deliveries were never marked, so the next owner sends them again.
 *
 * An endpoint is an (account, URL) pair, the operator's ops URL being the pair with no account: a delivery
 * belongs to the endpoint of its own `account_id` and `url`, so tenants that name the same URL never share
 * its state.
 */
import type { DataSource } from 'typeorm';
import type { BreakerSnapshot } from '@app/circuit-breaker';

/** NOTIFY channel that wakes the workers when a delivery is recorded; the payload is its URL. */
export const DELIVERY_CHANNEL = 'webhook_delivery';

/** Whose deliveries to which URL: an account's (accountId) or the operator's ops webhooks (null). */
export interface EndpointKey {
  readonly accountId: string | null;
  readonly url: string;
}

export interface AcquiredEndpoint extends EndpointKey {
  /** The endpoint row, which the lane writes its state back to. */
  readonly id: string;
  readonly downBreaker: BreakerSnapshot | null;
  readonly urlBreaker: BreakerSnapshot | null;
  readonly lastError: string | null;
  readonly lastSuccessAt: number | null;
}

export interface ClaimedDelivery {
  readonly id: string;
  readonly accountId: string | null;
  readonly kind: 'account' | 'ops';
  /** Attempts made before this one. */
  readonly attempts: number;
  readonly expiresAt: number;
  readonly eventId: string;
  readonly type: string;
  readonly eventCreatedAt: Date;
  readonly data: Record<string, unknown>;
}

interface AttemptRecord {
  readonly startedAt: number;
  readonly durationMs: number;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly delivered: boolean;
}

/** What became of a delivery the lane took. */
export interface DeliveryOutcome {
  readonly id: string;
  readonly status: 'pending' | 'delivered' | 'given_up';
  readonly nextAttemptAt: number | null;
  /** Null when no HTTP attempt was made (given up before sending, or not attempted). */
  readonly attempt: AttemptRecord | null;
}

export interface EndpointWrite {
  readonly downBreaker: BreakerSnapshot;
  readonly urlBreaker: BreakerSnapshot;
  readonly blockedUntil: number | null;
  readonly lastError: string | null;
  readonly lastSuccessAt: number | null;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/**
 * `column` belongs to the account in parameter `param`, or, that parameter being null, to none: two indexable
 * forms (`IS NOT DISTINCT FROM` would walk every pending row of the URL), the parameter typed in both.
 */
function ofAccount(column: string, param: string, accountId: string | null): string {
  return accountId === null ? `(${param}::uuid IS NULL AND ${column} IS NULL)` : `${column} = ${param}::uuid`;
}

/** An endpoint row and a delivery (or pending key) of the same endpoint. */
const SAME_ENDPOINT = (e: string, d: string): string => `${e}.url = ${d}.url AND ${e}.account_id IS NOT DISTINCT FROM ${d}.account_id`;

export class DeliveryStore {
  constructor(private readonly dataSource: DataSource) {}

  /** Marks given up every pending delivery past its lifetime, except those of endpoints a live replica is working on (it does it itself). */
  async giveUpExpired(now: number): Promise<number> {
    const [, affected] = (await this.dataSource.query(
      `UPDATE webhook_deliveries d
          SET status = 'given_up', given_up_at = $1, next_attempt_at = NULL, updated_at = $1
        WHERE d.status = 'pending' AND d.expires_at <= $1
          AND NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE ${SAME_ENDPOINT('e', 'd')} AND e.owner IS NOT NULL AND e.lease_until > $1)`,
      [iso(now)],
    )) as [unknown, number];
    return affected;
  }

  /** Due deliveries of a blocked endpoint wait for its next allowed attempt (or their end of life, if sooner). */
  async holdBlocked(now: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook_deliveries d
          SET next_attempt_at = LEAST(e.blocked_until, d.expires_at), updated_at = $1
         FROM webhook_endpoints e
        WHERE e.blocked_until > $1 AND (e.owner IS NULL OR e.lease_until <= $1)
          AND ${SAME_ENDPOINT('e', 'd')} AND d.status = 'pending' AND d.expires_at > $1
          AND d.next_attempt_at < LEAST(e.blocked_until, d.expires_at)`,
      [iso(now)],
    );
  }

  /**
   * Endpoints with a due delivery that nobody is working on and that are not blocked. Walks the distinct
   * (URL, account) pairs of pending deliveries through the index (one probe per pair: the next account of the
   * same URL, the URL's ops deliveries, or the next URL), so one endpoint's huge backlog never hides the others.
   */
  async dueEndpoints(now: number, limit: number): Promise<EndpointKey[]> {
    const rows = (await this.dataSource.query(
      `WITH RECURSIVE pending_keys(url, account_id) AS (
         (SELECT url, account_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY url, account_id LIMIT 1)
         UNION ALL
         SELECT n.url, n.account_id FROM pending_keys p CROSS JOIN LATERAL (
           (SELECT d.url, d.account_id FROM webhook_deliveries d
             WHERE d.status = 'pending' AND d.url = p.url AND d.account_id > p.account_id ORDER BY d.account_id LIMIT 1)
           UNION ALL
           (SELECT d.url, d.account_id FROM webhook_deliveries d
             WHERE d.status = 'pending' AND p.account_id IS NOT NULL AND d.url = p.url AND d.account_id IS NULL LIMIT 1)
           UNION ALL
           (SELECT d.url, d.account_id FROM webhook_deliveries d
             WHERE d.status = 'pending' AND d.url > p.url ORDER BY d.url, d.account_id LIMIT 1)
           LIMIT 1
         ) n
       )
       SELECT k.url, k.account_id FROM pending_keys k
        WHERE (CASE WHEN k.account_id IS NULL
                 THEN EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.url = k.url AND d.account_id IS NULL
                               AND d.status = 'pending' AND d.next_attempt_at <= $1)
                 ELSE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.url = k.url AND d.account_id = k.account_id
                               AND d.status = 'pending' AND d.next_attempt_at <= $1)
               END)
          AND NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE ${SAME_ENDPOINT('e', 'k')}
                           AND ((e.owner IS NOT NULL AND e.lease_until > $1) OR e.blocked_until > $1))
        LIMIT $2`,
      [iso(now), limit],
    )) as Array<{ url: string; account_id: string | null }>;
    return rows.map((r) => ({ accountId: r.account_id, url: r.url }));
  }

  /** Takes ownership of up to `limit` of these endpoints; the ones another replica is taking right now are skipped. */
  async acquire(keys: EndpointKey[], owner: string, now: number, leaseUntil: number, limit: number): Promise<AcquiredEndpoint[]> {
    const pairs = JSON.stringify(keys.map((k) => ({ url: k.url, account_id: k.accountId })));
    // Either unique index may be the one that already holds the endpoint: any conflict means it exists.
    await this.dataSource.query(
      `INSERT INTO webhook_endpoints (url, account_id, updated_at)
       SELECT k.url, k.account_id, $2 FROM jsonb_to_recordset($1::jsonb) AS k(url text, account_id uuid)
       ON CONFLICT DO NOTHING`,
      [pairs, iso(now)],
    );
    const [rows] = (await this.dataSource.query(
      `UPDATE webhook_endpoints e
          SET owner = $2, lease_until = $3, updated_at = $4
        WHERE e.id IN (
          SELECT w.id FROM webhook_endpoints w JOIN jsonb_to_recordset($1::jsonb) AS k(url text, account_id uuid) ON ${SAME_ENDPOINT('w', 'k')}
           WHERE (w.owner IS NULL OR w.lease_until <= $4) AND (w.blocked_until IS NULL OR w.blocked_until <= $4)
           ORDER BY w.url, w.account_id LIMIT $5
           FOR UPDATE OF w SKIP LOCKED)
       RETURNING e.id, e.account_id, e.url, e.down_breaker, e.url_breaker, e.last_error, e.last_success_at`,
      [pairs, owner, iso(leaseUntil), iso(now), limit],
    )) as [
      Array<{
        id: string;
        account_id: string | null;
        url: string;
        down_breaker: BreakerSnapshot | null;
        url_breaker: BreakerSnapshot | null;
        last_error: string | null;
        last_success_at: Date | null;
      }>,
      number,
    ];
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      url: r.url,
      downBreaker: r.down_breaker,
      urlBreaker: r.url_breaker,
      lastError: r.last_error,
      lastSuccessAt: r.last_success_at?.getTime() ?? null,
    }));
  }

  /**
   * The endpoint's due deliveries, oldest due first, leaving out those the lane already holds. No row
   * locks: only the endpoint's owner reads them, and it marks nothing until the outcome is known.
   */
  async fetch(endpoint: EndpointKey, now: number, limit: number, held: string[]): Promise<ClaimedDelivery[]> {
    const rows = (await this.dataSource.query(
      `SELECT d.id, d.account_id, d.kind, d.attempts, d.expires_at, d.event_id, ev.type, ev.created_at AS event_created_at, ev.data
         FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
        WHERE d.url = $1 AND ${ofAccount('d.account_id', '$5', endpoint.accountId)}
          AND d.status = 'pending' AND d.next_attempt_at <= $2 AND d.id <> ALL($4::uuid[])
        ORDER BY d.next_attempt_at
        LIMIT $3`,
      [endpoint.url, iso(now), limit, held, endpoint.accountId],
    )) as Array<{
      id: string;
      account_id: string | null;
      kind: 'account' | 'ops';
      attempts: number;
      expires_at: Date;
      event_id: string;
      type: string;
      event_created_at: Date;
      data: Record<string, unknown>;
    }>;
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      kind: r.kind,
      attempts: r.attempts,
      expiresAt: r.expires_at.getTime(),
      eventId: r.event_id,
      type: r.type,
      eventCreatedAt: r.event_created_at,
      data: r.data,
    }));
  }

  /**
   * Writes a batch of outcomes and their attempts, and the endpoint's state when given (renewing the lease
   * too; otherwise the heartbeat does), in one statement.
   */
  async complete(
    endpointId: string,
    owner: string,
    outcomes: DeliveryOutcome[],
    endpoint: EndpointWrite | null,
    now: number,
    leaseUntil: number,
  ): Promise<void> {
    const records = outcomes.map((o) => ({
      id: o.id,
      status: o.status,
      next_at: iso(o.nextAttemptAt),
      attempted: o.attempt !== null,
      started_at: o.attempt ? iso(o.attempt.startedAt) : null,
      duration_ms: o.attempt?.durationMs ?? null,
      status_code: o.attempt?.statusCode ?? null,
      error: o.attempt?.error ?? null,
      delivered: o.attempt?.delivered ?? null,
    }));
    await this.dataSource.query(
      `WITH r AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, status text, next_at timestamptz, attempted boolean,
           started_at timestamptz, duration_ms integer, status_code integer, error text, delivered boolean)
       ), upd AS (
         -- Keyed by id alone (a primary-key lookup per outcome, whatever the statistics say). A delivery that
         -- is no longer pending (another replica took over and finished it) keeps its status, but the attempt
         -- this one made still counts and is logged.
         UPDATE webhook_deliveries d SET
           status = CASE WHEN d.status = 'pending' THEN r.status ELSE d.status END,
           attempts = d.attempts + CASE WHEN r.attempted THEN 1 ELSE 0 END,
           next_attempt_at = CASE WHEN d.status = 'pending' THEN r.next_at ELSE d.next_attempt_at END,
           last_status_code = CASE WHEN r.attempted THEN r.status_code ELSE d.last_status_code END,
           last_error = CASE WHEN r.attempted THEN r.error ELSE d.last_error END,
           delivered_at = CASE WHEN d.status = 'pending' AND r.status = 'delivered' THEN $2::timestamptz ELSE d.delivered_at END,
           given_up_at = CASE WHEN d.status = 'pending' AND r.status = 'given_up' THEN $2::timestamptz ELSE d.given_up_at END,
           updated_at = $2
         FROM r WHERE d.id = r.id
         RETURNING d.id, d.attempts
       ), att AS (
         INSERT INTO webhook_attempts (delivery_id, number, started_at, duration_ms, status_code, error, delivered)
         SELECT r.id, upd.attempts, r.started_at, r.duration_ms, r.status_code, r.error, r.delivered
           FROM r JOIN upd ON upd.id = r.id WHERE r.attempted
       )
       UPDATE webhook_endpoints SET down_breaker = $5, url_breaker = $6, blocked_until = $7, last_error = $8,
              last_success_at = $9, lease_until = $10, updated_at = $2
        WHERE id = $3 AND owner = $4 AND $11::boolean`,
      [
        JSON.stringify(records),
        iso(now),
        endpointId,
        owner,
        endpoint && JSON.stringify(endpoint.downBreaker),
        endpoint && JSON.stringify(endpoint.urlBreaker),
        endpoint && iso(endpoint.blockedUntil),
        endpoint?.lastError ?? null,
        endpoint && iso(endpoint.lastSuccessAt),
        iso(leaseUntil),
        endpoint !== null,
      ],
    );
  }

  /** The endpoint is back: its pending deliveries are due now, whatever their own backoff said. */
  async releaseBacklog(endpoint: EndpointKey, now: number, held: string[]): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook_deliveries SET next_attempt_at = $2, updated_at = $2
        WHERE url = $1 AND ${ofAccount('account_id', '$4', endpoint.accountId)}
          AND status = 'pending' AND next_attempt_at > $2 AND id <> ALL($3::uuid[])`,
      [endpoint.url, iso(now), held, endpoint.accountId],
    );
  }

  /** Gives the endpoint up, with its state, so any replica can take it when it has due work again. */
  async release(endpointId: string, owner: string, endpoint: EndpointWrite, now: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook_endpoints SET owner = NULL, lease_until = NULL, down_breaker = $3, url_breaker = $4, blocked_until = $5,
              last_error = $6, last_success_at = $7, updated_at = $8
        WHERE id = $1 AND owner = $2`,
      [
        endpointId,
        owner,
        JSON.stringify(endpoint.downBreaker),
        JSON.stringify(endpoint.urlBreaker),
        iso(endpoint.blockedUntil),
        endpoint.lastError,
        iso(endpoint.lastSuccessAt),
        iso(now),
      ],
    );
  }

  /** Renews the leases of the endpoints (rows by id) this owner works on. */
  async renewLeases(owner: string, leaseUntil: number, endpointIds: string[]): Promise<void> {
    if (endpointIds.length === 0) return;
    await this.dataSource.query(`UPDATE webhook_endpoints SET lease_until = $2 WHERE owner = $1 AND id = ANY($3::uuid[])`, [
      owner,
      iso(leaseUntil),
      endpointIds,
    ]);
  }

  /**
   * Lets go of endpoints (rows by id) this owner holds but no longer works on (their lane failed with the
   * database and could not release them), keeping their stored state, so any replica can take them at once.
   */
  async releaseUnworked(endpointIds: string[], owner: string): Promise<void> {
    if (endpointIds.length === 0) return;
    await this.dataSource.query(`UPDATE webhook_endpoints SET owner = NULL, lease_until = NULL WHERE owner = $1 AND id = ANY($2::uuid[])`, [
      owner,
      endpointIds,
    ]);
  }
}
