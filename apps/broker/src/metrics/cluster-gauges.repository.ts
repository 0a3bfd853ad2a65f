/**
 * All the SQL of the cluster gauges: what the database knows that no one replica does (active sessions,
 * the pool, the webhook and relay backlogs), read on a schedule rather than counted on the hot paths.
 * `now` is the app's clock; each statement reads an index the table already has, except the given-up
 * count, which has its own partial one.
 */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

export interface ClusterFigures {
  sessions: Array<{ provider: string; channel: string; active: number }>;
  pool: Array<{ provider: string; enabled: number; disabled: number; idle: number; busiest: number }>;
  webhooks: Array<{ kind: string; pending: number; oldest: Date | null }>;
  givenUp: Array<{ kind: string; reason: string; count: number }>;
  relays: { pending: number; oldest: Date | null };
}

@Injectable()
export class ClusterGaugesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One read of every figure, statement after statement (the pool is shared with the requests). */
  async read(now: number): Promise<ClusterFigures> {
    const at = new Date(now).toISOString();
    const sessions: ClusterFigures['sessions'] = await this.dataSource.query(
      // A session's channels as one label value (`voice`, `sms`, `voice+sms`; stored voice first): the sum is the sessions.
      `/* metrics.sessions */ SELECT provider, array_to_string(channels, '+') AS channel, count(*)::int AS active
         FROM sessions WHERE status = 'active' AND inactive_at > $1 GROUP BY provider, channels`,
      [at],
    );
    const pool: ClusterFigures['pool'] = await this.dataSource.query(
      `/* metrics.pool */ WITH busy AS (
         SELECT DISTINCT proxy_number_id FROM sessions WHERE status = 'active' AND inactive_at > $1
       ), held AS (
         -- Each participant sits on a number once (the pool rule): its sessions there are the numbers it has taken.
         SELECT n.provider, count(*) AS sessions
           FROM session_participants p JOIN proxy_numbers n ON n.id = p.proxy_number_id
          WHERE p.active AND p.expires_at > $1 AND n.enabled
          GROUP BY n.provider, p.number
       )
       SELECT n.provider,
              (count(*) FILTER (WHERE n.enabled))::int AS enabled,
              (count(*) FILTER (WHERE NOT n.enabled))::int AS disabled,
              (count(*) FILTER (WHERE n.enabled AND b.proxy_number_id IS NULL))::int AS idle,
              COALESCE((SELECT max(h.sessions) FROM held h WHERE h.provider = n.provider), 0)::int AS busiest
         FROM proxy_numbers n LEFT JOIN busy b ON b.proxy_number_id = n.id
        GROUP BY n.provider`,
      [at],
    );
    const webhooks: ClusterFigures['webhooks'] = await this.dataSource.query(
      `/* metrics.webhooks */ SELECT kind, count(*)::int AS pending, min(created_at) AS oldest
         FROM webhook_deliveries WHERE status = 'pending' GROUP BY kind`,
    );
    const givenUp: ClusterFigures['givenUp'] = await this.dataSource.query(
      `/* metrics.given_up */ SELECT kind,
              CASE WHEN attempts = 0 THEN 'never-attempted'
                   WHEN last_status_code IS NULL THEN 'no-response'
                   WHEN last_status_code BETWEEN 400 AND 499 THEN 'http-4xx'
                   WHEN last_status_code >= 500 THEN 'http-5xx'
                   ELSE 'http-other' END AS reason,
              count(*)::int AS count
         FROM webhook_deliveries WHERE status = 'given_up' GROUP BY 1, 2`,
    );
    const [relays]: Array<ClusterFigures['relays']> = await this.dataSource.query(
      `/* metrics.relays */ SELECT count(*)::int AS pending, min(created_at) AS oldest FROM interactions WHERE status = 'pending'`,
    );
    return { sessions, pool, webhooks, givenUp, relays };
  }
}
