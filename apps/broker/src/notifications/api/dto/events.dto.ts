import { CursorPageQueryDto } from '../../../common/pagination/cursor-page-query.dto';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsUUID } from 'class-validator';
import { SESSION_EVENT_TYPES } from '../../entities';

export class ListEventsQueryDto extends CursorPageQueryDto {
  @ApiPropertyOptional({ description: 'Only the events of this session.', format: 'uuid' })
  @IsOptional()
  @IsUUID('all', { message: 'session must be a session id' })
  session?: string;
}

export class DeliverySummaryDto {
  @ApiProperty({ description: 'The delivery id: the `webhook-id` header of every attempt.' })
  id: string;

  @ApiProperty()
  url: string;

  @ApiProperty({ enum: ['pending', 'delivered', 'given_up'] })
  status: string;

  @ApiProperty({ description: 'Attempts made so far.' })
  attempts: number;

  @ApiProperty({ type: String, nullable: true })
  nextAttemptAt: string | null;

  @ApiProperty({ type: String, nullable: true })
  deliveredAt: string | null;
}

export class EventDto {
  @ApiProperty({ description: 'The `id` of the webhook body.' })
  id: string;

  @ApiProperty({ enum: SESSION_EVENT_TYPES })
  type: string;

  @ApiProperty({ description: 'When it happened: the `timestamp` of the webhook body.' })
  timestamp: string;

  @ApiProperty({ type: String, nullable: true })
  sessionId: string | null;

  @ApiProperty({ type: 'object', additionalProperties: true })
  data: Record<string, unknown>;

  @ApiProperty({ type: [DeliverySummaryDto], description: 'Empty when neither the session nor the account had a callback URL.' })
  deliveries: DeliverySummaryDto[];
}

export class EventListDto {
  @ApiProperty({ type: [EventDto], description: 'Newest first.' })
  events: EventDto[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
  nextCursor: string | null;
}
