import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import type { Clock } from '@app/clock';
import { CLOCK } from '../common/clock';
import { ProblemException, type ProblemDetails } from '../common/problem';
import { BROKER_CONFIG, type BrokerConfig } from '../config';

export const IDEMPOTENCY_TTL_HOURS = 24;
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const WAIT_STEP_MS = 50;
const TTL_MS = IDEMPOTENCY_TTL_HOURS * 3_600_000;

/** A JSON text with sorted keys: the same body in another key order is the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

interface StoredRecord {
  request_hash: string;
  response_status: number | null;
  response_body: string | null;
  created_at: Date;
  expires_at: Date;
}

/**
 * `Idempotency-Key` for POST /v1/sessions: the first request with a key runs and its answer is kept
 * 24 h; the same key with the same body replays that answer; with another body it is a 422. A
 * request arriving while the first is still running waits for its answer, so concurrent requests
 * with one key make one session. A first request still unanswered after the longest a create can
 * take (`takeoverAfterMs`) died (kill -9, lost connection): the next request with the key takes it
 * over, first asking `recover` whether the dead one had made its session, and only then runs again.
 * The claim's time fences the dead request: an answer of a request that lost its claim is not kept.
 * A 5xx is not kept: the client may retry with the same key. Bodies are kept as the text first sent,
 * so a replay is byte-identical. Times come from the clock.
 */
@Injectable()
export class IdempotencyService {
  /** The longest a create can take: every provider tried up to its timeout, plus one call's and 5 s of margin. */
  readonly takeoverAfterMs: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.takeoverAfterMs = config.providerCallTimeoutMs * (config.providers.length + 1) + 5_000;
  }

  async run<T>(
    accountId: string,
    key: string,
    body: unknown,
    response: Response,
    work: () => Promise<T>,
    recover: () => Promise<T | null> = async () => null,
  ): Promise<T> {
    if (!KEY_PATTERN.test(key)) {
      throw new ProblemException({
        status: 400,
        slug: 'validation-error',
        title: 'Invalid Idempotency-Key',
        detail: 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.',
        extensions: {
          errors: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters without spaces' }],
        },
      });
    }
    const requestHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
    for (;;) {
      const now = this.clock.now();
      const claimed: unknown[] = await this.dataSource.query(
        `INSERT INTO idempotency_records (account_id, key, request_hash, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (account_id, key) DO NOTHING RETURNING key`,
        [accountId, key, requestHash, new Date(now), new Date(now + TTL_MS)],
      );
      if (claimed.length > 0) return this.runFirst(accountId, key, new Date(now), work);

      const rows: StoredRecord[] = await this.dataSource.query(
        `SELECT request_hash, response_status, response_body, created_at, expires_at
           FROM idempotency_records WHERE account_id = $1 AND key = $2`,
        [accountId, key],
      );
      const record = rows[0];
      if (!record) continue; // the first request failed with a 5xx and let go of the key: take it
      if (record.expires_at.getTime() <= now) {
        await this.dataSource.query('DELETE FROM idempotency_records WHERE account_id = $1 AND key = $2 AND expires_at <= $3', [
          accountId,
          key,
          new Date(now),
        ]);
        continue;
      }
      if (record.request_hash !== requestHash) {
        throw new ProblemException({
          status: 422,
          slug: 'idempotency-key-reused',
          title: 'Idempotency-Key reused',
          detail: 'This Idempotency-Key was used with a different request body; use a new key for a new request.',
        });
      }
      if (record.response_status !== null) {
        response.setHeader(REPLAYED_HEADER, 'true');
        if (record.response_status >= 400) {
          // Replayed whole: its extensions (`errors`, `provider`...) too.
          const { type, title, detail, status: _status, ...extensions } = JSON.parse(record.response_body!) as ProblemDetails;
          throw new ProblemException({
            status: record.response_status,
            slug: String(type).replace(/^\/problems\//, ''),
            title,
            detail,
            extensions,
          });
        }
        response.status(record.response_status);
        return JSON.parse(record.response_body!) as T;
      }
      if (now - record.created_at.getTime() >= this.takeoverAfterMs) {
        const claimedAt = new Date(now);
        // One statement, so of several requests finding the dead claim only one takes it over.
        const taken: unknown[] = await this.dataSource.query(
          `UPDATE idempotency_records SET created_at = $4, expires_at = $5
            WHERE account_id = $1 AND key = $2 AND response_status IS NULL AND created_at <= $3 RETURNING key`,
          [accountId, key, new Date(now - this.takeoverAfterMs), claimedAt, new Date(now + TTL_MS)],
        );
        if (taken.length === 0) continue;
        const recovered = await recover();
        if (recovered === null) return this.runFirst(accountId, key, claimedAt, work);
        await this.store(accountId, key, claimedAt, 201, recovered);
        return recovered;
      }
      await new Promise((done) => setTimeout(done, WAIT_STEP_MS));
    }
  }

  private async runFirst<T>(accountId: string, key: string, claimedAt: Date, work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (error) {
      if (error instanceof ProblemException && error.getStatus() < 500) {
        await this.store(accountId, key, claimedAt, error.getStatus(), error.toProblem());
      } else {
        await this.dataSource.query(
          'DELETE FROM idempotency_records WHERE account_id = $1 AND key = $2 AND created_at = $3 AND response_status IS NULL',
          [accountId, key, claimedAt],
        );
      }
      throw error;
    }
    await this.store(accountId, key, claimedAt, 201, result);
    return result;
  }

  /** Keeps the answer as the text sent, if this request still holds the claim it made at `claimedAt`. */
  private async store(accountId: string, key: string, claimedAt: Date, status: number, body: unknown): Promise<void> {
    await this.dataSource.query(
      `UPDATE idempotency_records SET response_status = $4, response_body = $5
        WHERE account_id = $1 AND key = $2 AND created_at = $3 AND response_status IS NULL`,
      [accountId, key, claimedAt, status, JSON.stringify(body)],
    );
  }

  /** Forgets records older than 24 h. */
  async purgeExpired(): Promise<number> {
    // TypeORM answers a DELETE with [rows, affected count].
    const [, deleted] = (await this.dataSource.query(
      'DELETE FROM idempotency_records WHERE expires_at <= $1 AND response_status IS NOT NULL',
      [new Date(this.clock.now())],
    )) as [unknown[], number];
    return deleted;
  }
}
