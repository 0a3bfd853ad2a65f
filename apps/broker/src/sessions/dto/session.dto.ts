import { CursorPageQueryDto } from '../../common/pagination/cursor-page-query.dto';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import type { Channel } from '../../numbers/proxy-number.entity';
import type { Session } from '../session.entity';

export type PublicSessionStatus = 'active' | 'closed' | 'expired';

export class SessionParticipantDto {
  @ApiProperty({ example: '+2348030000001' })
  number: string;
}

export class SessionDto {
  @ApiProperty()
  id: string;

  @ApiProperty({ enum: ['voice', 'sms'] })
  channel: Channel;

  @ApiProperty({ enum: ['active', 'closed', 'expired'] })
  status: PublicSessionStatus;

  @ApiProperty({ example: 'primary', description: 'The provider the session was created on; it stays there.' })
  provider: string;

  @ApiProperty({ example: '+2349010000001' })
  proxyNumber: string;

  @ApiProperty({ type: [SessionParticipantDto] })
  participants: SessionParticipantDto[];

  @ApiProperty()
  createdAt: string;

  @ApiProperty()
  expiresAt: string;

  @ApiProperty({ type: String, nullable: true })
  callbackUrl: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata: Record<string, unknown>;

  /** A session is inactive from expiresAt on, whether or not the sweeper has marked it. */
  static from(session: Session, now: Date): SessionDto {
    const status: PublicSessionStatus =
      session.status === 'active' && session.expiresAt <= now ? 'expired' : session.status === 'pending' ? 'active' : session.status;
    return {
      id: session.id,
      channel: session.channel,
      status,
      provider: session.provider,
      proxyNumber: session.proxyNumber,
      participants: session.participants.map((number) => ({ number })),
      createdAt: session.createdAt.toISOString(),
      expiresAt: session.expiresAt.toISOString(),
      callbackUrl: session.callbackUrl,
      metadata: session.metadata,
    };
  }
}

export class SessionListDto {
  @ApiProperty({ type: [SessionDto], description: 'Newest first.' })
  sessions: SessionDto[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
  nextCursor: string | null;
}

export class ListSessionsQueryDto extends CursorPageQueryDto {
  @ApiPropertyOptional({ enum: ['active', 'closed', 'expired'] })
  @IsOptional()
  @IsIn(['active', 'closed', 'expired'], { message: 'status must be active, closed or expired' })
  status?: PublicSessionStatus;
}

export class InteractionDto {
  @ApiProperty()
  id: string;

  @ApiProperty({ enum: ['voice', 'sms'] })
  channel: Channel;

  @ApiProperty({ example: '+2348030000001' })
  from: string;

  @ApiProperty({ example: '+2348030000002' })
  to: string;

  @ApiProperty({
    enum: ['pending', 'relayed', 'delivered', 'undelivered', 'failed', 'bridged', 'completed', 'busy', 'no-answer', 'declined', 'canceled'],
  })
  status: string;

  @ApiProperty()
  createdAt: string;
}

export class InteractionListDto {
  @ApiProperty({ type: [InteractionDto], description: 'Oldest first; a page of at most `limit` (50 unless asked, at most 200).' })
  interactions: InteractionDto[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last one.' })
  nextCursor: string | null;
}
