/**
 * The SQL of `Idempotency-Key` records. Every time is IdempotencyService's clock, passed in; nothing
 * here reads now(). Typed rows out; the service decides what a record means for a request.
 */
import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, QueryRunner } from 'typeorm';
import { preparedStatement, runPrepared } from '@app/database';

/**
 * Where a first request announces that its key is settled (answer kept, or claim let go). The payload
 * is `keyTopic(accountId, key)`, never the account or key in clear; waiters on other replicas wake on it.
 */
export const IDEMPOTENCY_CHANNEL = 'broker_idempotency';

/** A key's name on IDEMPOTENCY_CHANNEL: the SHA-256 (hex, 64 characters) of account and key. */
export function keyTopic(accountId: string, key: string): string {
  return createHash('sha256').update(`${accountId}\u0000${key}`).digest('hex');
}

interface IdempotencyRecordRow {
  requestHash: string;
  /** Null while the first request is still being handled. */
  responseStatus: number | null;
  /** The JSON text first sent. */
  responseBody: string | null;
  createdAt: Date;
  expiresAt: Date;
}

/**
 * A settled key's wake, a statement of its own sent after the write committed (parsed once per connection).
 * Inside the write's statement it would take PostgreSQL's database-wide NOTIFY lock at that commit and hold it
 * through the WAL flush, so every create with a key would commit one at a time (issue #19).
 */
const SETTLED = preparedStatement('idempotency.settled', `/* idempotency.settled */ SELECT pg_notify($1, $2)`);

/** TypeORM answers an UPDATE or DELETE (RETURNING or not) with [rows, affected count]. */
type UpdateResult = [unknown[], number];

interface RawRecord {
  request_hash: string;
  response_status: number | null;
  response_body: string | null;
  created_at: Date;
  expires_at: Date;
}

@Injectable()
export class IdempotencyRepository {
  private readonly logger = new Logger(IdempotencyRepository.name);
  /** Where a NOTIFY that failed after a committed write is told. */
  warn: (message: string) => void = (message) => this.logger.warn(message);

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Claims the key for a first request made at `at`; false when a record is there already. */
  async claim(accountId: string, key: string, requestHash: string, at: Date, expiresAt: Date): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `/* idempotency.claim */ INSERT INTO idempotency_records (account_id, key, request_hash, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (account_id, key) DO NOTHING RETURNING key`,
      [accountId, key, requestHash, at, expiresAt],
    );
    return rows.length > 0;
  }

  async find(accountId: string, key: string): Promise<IdempotencyRecordRow | undefined> {
    const rows: RawRecord[] = await this.dataSource.query(
      `/* idempotency.find */ SELECT request_hash, response_status, response_body, created_at, expires_at
         FROM idempotency_records WHERE account_id = $1 AND key = $2`,
      [accountId, key],
    );
    const row = rows[0];
    return row
      ? {
          requestHash: row.request_hash,
          responseStatus: row.response_status,
          responseBody: row.response_body,
          createdAt: row.created_at,
          expiresAt: row.expires_at,
        }
      : undefined;
  }

  async deleteExpired(accountId: string, key: string, now: Date): Promise<void> {
    await this.dataSource.query(
      '/* idempotency.expire */ DELETE FROM idempotency_records WHERE account_id = $1 AND key = $2 AND expires_at <= $3',
      [accountId, key, now],
    );
  }

  /**
   * Takes over a claim made at or before `claimedBefore` that has no answer, as a claim made at `at`.
   * One statement, so of several requests finding the dead claim only one takes it over.
   */
  async takeOver(accountId: string, key: string, claimedBefore: Date, at: Date, expiresAt: Date): Promise<boolean> {
    const result: UpdateResult = await this.dataSource.query(
      `/* idempotency.takeover */ UPDATE idempotency_records SET created_at = $4, expires_at = $5
        WHERE account_id = $1 AND key = $2 AND response_status IS NULL AND created_at <= $3 RETURNING key`,
      [accountId, key, claimedBefore, at, expiresAt],
    );
    return result[1] > 0;
  }

  /**
   * Keeps the answer (`body`, the JSON text sent) if the claim made at `claimedAt` still holds; says
   * whether it did. Once the answer is committed, and only if it was kept, notifies IDEMPOTENCY_CHANNEL
   * (`settle`), so waiters on other replicas wake.
   */
  async store(accountId: string, key: string, claimedAt: Date, status: number, body: string): Promise<boolean> {
    return this.settle(accountId, key, async (runner) => {
      const result: UpdateResult = await runner.query(
        `/* idempotency.store */ UPDATE idempotency_records SET response_status = $4, response_body = $5
          WHERE account_id = $1 AND key = $2 AND created_at = $3 AND response_status IS NULL RETURNING key`,
        [accountId, key, claimedAt, status, body],
      );
      return result[1] > 0;
    });
  }

  /**
   * Lets go of the claim made at `claimedAt` (the request failed with a 5xx): the next request runs
   * again. Notifies IDEMPOTENCY_CHANNEL after the delete, if it deleted the claim, as `store` does.
   */
  async release(accountId: string, key: string, claimedAt: Date): Promise<void> {
    await this.settle(accountId, key, async (runner) => {
      const result: UpdateResult = await runner.query(
        `/* idempotency.release */ DELETE FROM idempotency_records
          WHERE account_id = $1 AND key = $2 AND created_at = $3 AND response_status IS NULL RETURNING key`,
        [accountId, key, claimedAt],
      );
      return result[1] > 0;
    });
  }

  /**
   * Runs `write` (one autocommit statement, so committed when it returns) and, if it changed the record, sends
   * the key's NOTIFY as a statement of its own on the same connection, before it goes back to the pool. A
   * NOTIFY that fails is told to `warn` and fails nothing: the record is committed, and a waiter on another
   * replica finds it when it looks again (IdempotencyService's recheck, 2 s at most).
   */
  private async settle(accountId: string, key: string, write: (runner: QueryRunner) => Promise<boolean>): Promise<boolean> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const written = await write(runner);
      if (written) {
        try {
          await runPrepared(runner, SETTLED, [IDEMPOTENCY_CHANNEL, keyTopic(accountId, key)]);
        } catch (error) {
          this.warn(
            `could not notify ${IDEMPOTENCY_CHANNEL} after settling an Idempotency-Key (${(error as Error).message}); ` +
              'waiters on other replicas find the record when they look again',
          );
        }
      }
      return written;
    } finally {
      await runner.release();
    }
  }

  /** Forgets answered records that expired by `now`; answers how many. */
  async purgeExpired(now: Date): Promise<number> {
    const [, deleted]: UpdateResult = await this.dataSource.query(
      '/* idempotency.purge */ DELETE FROM idempotency_records WHERE expires_at <= $1 AND response_status IS NOT NULL',
      [now],
    );
    return deleted;
  }
}
