import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash } from 'node:crypto';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { ProblemException, type ProblemDetails } from '../common/problem';
import { BROKER_CONFIG, type BrokerConfig } from '../config';

export const IDEMPOTENCY_TTL_HOURS = 24;
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const WAIT_STEP_MS = 50;

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
  response_body: unknown;
  expired: boolean;
}

/**
 * `Idempotency-Key` for POST /v1/sessions: the first request with a key runs and its answer is kept
 * 24 h; the same key with the same body replays that answer; with another body it is a 422. A
 * request arriving while the first is still running waits for its answer, so concurrent requests
 * with one key make one session. A 5xx is not kept: the client may retry with the same key.
 */
@Injectable()
export class IdempotencyService {
  private readonly maxWaitMs: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(BROKER_CONFIG) config: BrokerConfig,
  ) {
    // Long enough for a create that tries every provider up to its timeout.
    this.maxWaitMs = config.providerCallTimeoutMs * (config.providers.length + 1) + 5_000;
  }

  async run<T>(accountId: string, key: string, body: unknown, response: Response, work: () => Promise<T>): Promise<T> {
    if (!KEY_PATTERN.test(key)) {
      throw new ProblemException(
        400,
        'Invalid Idempotency-Key',
        'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces.',
        'validation-error',
        {
          errors: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters without spaces' }],
        },
      );
    }
    const requestHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
    for (let waited = 0; ;) {
      const claimed: unknown[] = await this.dataSource.query(
        `INSERT INTO idempotency_records (account_id, key, request_hash, expires_at)
         VALUES ($1, $2, $3, now() + interval '${IDEMPOTENCY_TTL_HOURS} hours')
         ON CONFLICT (account_id, key) DO NOTHING RETURNING key`,
        [accountId, key, requestHash],
      );
      if (claimed.length > 0) return this.runFirst(accountId, key, work);

      const rows: StoredRecord[] = await this.dataSource.query(
        `SELECT request_hash, response_status, response_body, expires_at <= now() AS expired
           FROM idempotency_records WHERE account_id = $1 AND key = $2`,
        [accountId, key],
      );
      const record = rows[0];
      if (!record) continue; // the first request failed with a 5xx and let go of the key: take it
      if (record.expired) {
        await this.dataSource.query('DELETE FROM idempotency_records WHERE account_id = $1 AND key = $2 AND expires_at <= now()', [
          accountId,
          key,
        ]);
        continue;
      }
      if (record.request_hash !== requestHash) {
        throw new ProblemException(
          422,
          'Idempotency-Key reused',
          'This Idempotency-Key was used with a different request body; use a new key for a new request.',
          'idempotency-key-reused',
        );
      }
      if (record.response_status !== null) {
        response.setHeader(REPLAYED_HEADER, 'true');
        if (record.response_status >= 400) {
          const problem = record.response_body as ProblemDetails;
          throw new ProblemException(
            record.response_status,
            problem.title,
            problem.detail,
            String(problem.type).replace(/^\/problems\//, ''),
          );
        }
        response.status(record.response_status);
        return record.response_body as T;
      }
      if (waited >= this.maxWaitMs) {
        throw new ProblemException(
          409,
          'Request in progress',
          'A request with this Idempotency-Key is still being handled; retry shortly.',
          'idempotency-in-progress',
        );
      }
      await new Promise((done) => setTimeout(done, WAIT_STEP_MS));
      waited += WAIT_STEP_MS;
    }
  }

  private async runFirst<T>(accountId: string, key: string, work: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await work();
    } catch (error) {
      if (error instanceof ProblemException && error.getStatus() < 500) {
        await this.store(accountId, key, error.getStatus(), error.toProblem());
      } else {
        await this.dataSource.query('DELETE FROM idempotency_records WHERE account_id = $1 AND key = $2', [accountId, key]);
      }
      throw error;
    }
    await this.store(accountId, key, 201, result);
    return result;
  }

  private async store(accountId: string, key: string, status: number, body: unknown): Promise<void> {
    await this.dataSource.query(
      'UPDATE idempotency_records SET response_status = $3, response_body = $4 WHERE account_id = $1 AND key = $2',
      [accountId, key, status, JSON.stringify(body)],
    );
  }

  /** Forgets records older than 24 h. */
  async purgeExpired(): Promise<number> {
    // TypeORM answers a DELETE with [rows, affected count].
    const [, deleted] = (await this.dataSource.query(
      'DELETE FROM idempotency_records WHERE expires_at <= now() AND response_status IS NOT NULL',
    )) as [unknown[], number];
    return deleted;
  }
}
