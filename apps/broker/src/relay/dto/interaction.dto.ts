import { ApiProperty } from '@nestjs/swagger';
import type { Channel } from '../../common/phone-number';
import type { Interaction } from '../interaction.entity';

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
    enum: [
      'pending',
      'relayed',
      'delivered',
      'undelivered',
      'failed',
      'bridged',
      'completed',
      'busy',
      'no-answer',
      'declined',
      'canceled',
      'blocked',
      'out-of-session',
    ],
    description:
      '`blocked`: the intercept refused it (not relayed, not bridged); `out-of-session`: it came on a channel the session does not have.',
  })
  status: string;

  @ApiProperty()
  createdAt: string;

  static from(interaction: Interaction): InteractionDto {
    return {
      id: interaction.id,
      channel: interaction.channel,
      from: interaction.from,
      to: interaction.to,
      status: interaction.status,
      createdAt: interaction.createdAt.toISOString(),
    };
  }
}

export class InteractionListDto {
  @ApiProperty({ type: [InteractionDto], description: 'Oldest first; a page of at most `limit` (50 unless asked, at most 200).' })
  interactions: InteractionDto[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last one.' })
  nextCursor: string | null;
}
