/**
 * What Twilio's Interactions routes read of the broker's interactions (the relay's table): one session's,
 * newest first, all of them or only the app's messages to one participant (its MessageInteractions: the
 * ones no provider webhook made); and the erasing of one's text, Twilio's Interaction DELETE.
 */
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { PageCursor } from '../../../common/pagination/page-cursor';
import type { Queryable } from '../../../notifications';
import type { Channel } from '../../../numbers/proxy-number.entity';
import type { InteractionStatus } from '../../../relay/interaction.entity';

export interface InteractionRow {
  readonly id: string;
  readonly sessionId: string;
  readonly channel: Channel;
  readonly from: string;
  readonly to: string;
  readonly text: string | null;
  readonly status: InteractionStatus;
  readonly providerEventId: string | null;
  readonly providerRef: string | null;
  readonly durationSec: number | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

const COLUMNS = `id, session_id, channel, from_number, to_number, text, status, provider_event_id, provider_ref, duration_sec, created_at, updated_at`;

interface Raw {
  id: string;
  session_id: string;
  channel: Channel;
  from_number: string;
  to_number: string;
  text: string | null;
  status: InteractionStatus;
  provider_event_id: string | null;
  provider_ref: string | null;
  duration_sec: number | null;
  created_at: Date;
  updated_at: Date;
}

@Injectable()
export class ProxyInteractionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** `sentTo`: only the app's messages to this participant. */
  async page(sessionId: string, limit: number, after: PageCursor | undefined, sentTo?: string): Promise<InteractionRow[]> {
    const rows = await this.dataSource.query<Raw[]>(
      `SELECT ${COLUMNS} FROM interactions
        WHERE session_id = $1 AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4::uuid))
          AND ($5::text IS NULL OR (to_number = $5 AND provider_event_id IS NULL AND channel = 'sms'))
        ORDER BY created_at DESC, id DESC LIMIT $2`,
      [sessionId, limit, after?.at ?? null, after?.id ?? null, sentTo ?? null],
    );
    return rows.map(row);
  }

  async find(sessionId: string, id: string): Promise<InteractionRow | null> {
    const [found] = await this.dataSource.query<Raw[]>(`SELECT ${COLUMNS} FROM interactions WHERE session_id = $1 AND id = $2`, [
      sessionId,
      id,
    ]);
    return found ? row(found) : null;
  }

  /** By id alone, on `runner` (a callback reads the one its event is about, in the event's transaction). */
  async byId(runner: Queryable, id: string): Promise<InteractionRow | null> {
    const [found] = (await runner.query(`SELECT ${COLUMNS} FROM interactions WHERE id = $1`, [id])) as Raw[];
    return found ? row(found) : null;
  }

  /** Erases its text (its PII); a relay not sent yet keeps it until it goes. */
  async eraseText(sessionId: string, id: string): Promise<void> {
    await this.dataSource.query(
      `/* twilio-proxy.erase_text */ UPDATE interactions SET text = NULL WHERE session_id = $1 AND id = $2 AND status <> 'pending'`,
      [sessionId, id],
    );
  }
}

function row(r: Raw): InteractionRow {
  return {
    id: r.id,
    sessionId: r.session_id,
    channel: r.channel,
    from: r.from_number,
    to: r.to_number,
    text: r.text,
    status: r.status,
    providerEventId: r.provider_event_id,
    providerRef: r.provider_ref,
    durationSec: r.duration_sec,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
