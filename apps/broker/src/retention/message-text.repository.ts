import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** The SQL of erasing message bodies: the interactions stay, their `text` goes. */
@Injectable()
export class MessageTextRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Erases the text of at most `limit` interactions that arrived at or before `cutoff`, oldest first, and
   * answers how many. `cutoff` is a millisecond of the app's clock and stands for all of it: a text that
   * arrived at 12:00:00.123456 is due at a cutoff of 12:00:00.123, not one millisecond later. A relay still pending keeps its text (it is yet to be sent); a row another transaction
   * holds is skipped and taken on a later pass.
   */
  async eraseUpTo(cutoff: Date, limit: number): Promise<number> {
    const [, erased] = (await this.dataSource.query(
      `/* retention.erase_texts */ UPDATE interactions SET text = NULL
        WHERE id IN (SELECT id FROM interactions
                      WHERE text IS NOT NULL AND created_at < $1::timestamptz + interval '1 millisecond' AND status <> 'pending'
                      ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [cutoff.toISOString(), limit],
    )) as [unknown, number];
    return erased;
  }
}
