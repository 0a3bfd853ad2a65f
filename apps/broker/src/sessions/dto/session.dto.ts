import { CursorPageQueryDto } from '../../common/pagination/cursor-page-query.dto';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import type { Channel } from '../../numbers/proxy-number.entity';
import { expiredReasonOf } from '../session-expiry';
import type { ExpiredReason, Session } from '../session.entity';
import { MAX_UNIQUE_NAME_LENGTH } from './create-session.dto';

type PublicSessionStatus = 'active' | 'closed' | 'expired';

export class SessionParticipantDto {
  @ApiProperty({ example: '+2348030000001' })
  number: string;
}

/** One proxy number a session has had (`numberHistory`). */
export class SessionNumberDto {
  @ApiProperty({ example: 'primary' })
  provider: string;

  @ApiProperty({ example: '+2349010000001' })
  proxyNumber: string;

  @ApiProperty({ description: 'When the session got it: its creation, or the rescue that moved it there.' })
  since: string;

  @ApiProperty({ type: String, nullable: true, description: 'When a rescue moved the session off it; null for the current one.' })
  until: string | null;
}

export class SessionDto {
  @ApiProperty()
  id: string;

  @ApiProperty({
    type: [String],
    enum: ['voice', 'sms'],
    description: 'What the session carries (voice first); its proxy number carries each.',
  })
  channels: Channel[];

  @ApiProperty({
    enum: ['voice', 'sms'],
    nullable: true,
    deprecated: true,
    description: 'The older field: the session’s one channel; null for a session with both (read channels).',
  })
  channel: Channel | null;

  @ApiProperty({ enum: ['active', 'closed', 'expired'] })
  status: PublicSessionStatus;

  @ApiProperty({
    enum: ['ttl', 'idle'],
    nullable: true,
    description: 'Why it expired: its expiresAt, or idleTtlSeconds without an interaction.',
  })
  expiredReason: ExpiredReason | null;

  @ApiProperty({
    example: 'primary',
    description: 'The provider the session is on: the one it was created on, unless a rescue moved it (numberHistory).',
  })
  provider: string;

  @ApiProperty({ example: '+2349010000001' })
  proxyNumber: string;

  @ApiProperty({
    type: [SessionNumberDto],
    description:
      'Every proxy number the session has had, oldest first; the last is its current one. More than one only after a session rescue (PUT /v1/account/rescue).',
  })
  numberHistory: SessionNumberDto[];

  @ApiProperty({ type: [SessionParticipantDto] })
  participants: SessionParticipantDto[];

  @ApiProperty()
  createdAt: string;

  @ApiProperty({ description: 'The hard limit (ttlSeconds): it ends then, however recent its last interaction.' })
  expiresAt: string;

  @ApiProperty({ type: Number, nullable: true, description: 'It expires this long after its last interaction (or its creation).' })
  idleTtlSeconds: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'Its last interaction; null while it has none.' })
  lastInteractionAt: string | null;

  @ApiProperty({ type: String, nullable: true })
  uniqueName: string | null;

  @ApiProperty({ type: String, nullable: true })
  callbackUrl: string | null;

  @ApiProperty({ type: String, nullable: true, description: "Its own intercept URL; null: the account's, if any." })
  interceptUrl: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true })
  metadata: Record<string, unknown>;

  /** A session is inactive from its inactiveAt (expiresAt, or sooner its idle deadline) on, whether or not the sweeper has marked it. */
  static from(session: Session, now: Date): SessionDto {
    const lapsed = session.status === 'active' && session.inactiveAt <= now;
    const status: PublicSessionStatus = lapsed ? 'expired' : session.status === 'pending' ? 'active' : session.status;
    return {
      id: session.id,
      channels: [...session.channels],
      channel: session.channels.length === 1 ? session.channels[0] : null,
      status,
      expiredReason: status !== 'expired' ? null : (session.expiredReason ?? expiredReasonOf(session)),
      provider: session.provider,
      proxyNumber: session.proxyNumber,
      numberHistory: numberHistoryOf(session),
      participants: session.participants.map((number) => ({ number })),
      createdAt: session.createdAt.toISOString(),
      expiresAt: session.expiresAt.toISOString(),
      idleTtlSeconds: session.idleTtlSeconds,
      lastInteractionAt: session.lastInteractionAt?.toISOString() ?? null,
      uniqueName: session.uniqueName,
      callbackUrl: session.callbackUrl,
      interceptUrl: session.interceptUrl,
      metadata: session.metadata,
    };
  }
}

/** The numbers it had (`numberHistory`, none before a rescue), then its current one, held since the last move. */
function numberHistoryOf(session: Session): SessionNumberDto[] {
  const past = session.numberHistory ?? [];
  const current: SessionNumberDto = {
    provider: session.provider,
    proxyNumber: session.proxyNumber,
    since: past.length > 0 ? past[past.length - 1].until : session.createdAt.toISOString(),
    until: null,
  };
  return [...past.map((n) => ({ provider: n.provider, proxyNumber: n.proxyNumber, since: n.since, until: n.until })), current];
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

  @ApiPropertyOptional({ description: 'Only the sessions with this uniqueName (at most one of them live).' })
  @IsOptional()
  @IsString({ message: 'uniqueName must be a string' })
  @MinLength(1, { message: 'uniqueName must not be empty' })
  @MaxLength(MAX_UNIQUE_NAME_LENGTH, { message: `uniqueName must be at most ${MAX_UNIQUE_NAME_LENGTH} characters` })
  uniqueName?: string;
}
