import { Injectable } from '@nestjs/common';
import type { CursorPageQueryDto } from '../common/pagination/cursor-page-query.dto';
import { decodePrecisePageCursor, encodePrecisePageCursor } from '../common/pagination/page-cursor';
import { SessionRepository } from '../sessions/session.repository';
import { InteractionDto, type InteractionListDto } from './dto/interaction.dto';
import { InteractionRepository } from './interaction.repository';
import { sessionNotFound } from './messages.service';

/** A session's interactions as the API lists them: its own account's session only, a page at a time. */
@Injectable()
export class SessionInteractions {
  constructor(
    private readonly sessions: SessionRepository,
    private readonly interactions: InteractionRepository,
  ) {}

  /** A page of the session's interactions, oldest first (`nextCursor` for the next one, as the other lists). */
  async page(accountId: string, id: string, query: CursorPageQueryDto = {}): Promise<InteractionListDto> {
    const session = await this.sessions.find(accountId, id);
    // Another account's session, or one not made yet, is simply not there.
    if (!session || session.status === 'pending') throw sessionNotFound();
    const limit = query.limit ?? 50;
    const after = query.cursor ? decodePrecisePageCursor(query.cursor) : undefined;
    const rows = await this.interactions.pageForSession(id, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1]?.position;
    return {
      interactions: page.map(({ interaction }) => InteractionDto.from(interaction)),
      nextCursor: rows.length > limit ? encodePrecisePageCursor(last.at, last.id) : null,
    };
  }
}
