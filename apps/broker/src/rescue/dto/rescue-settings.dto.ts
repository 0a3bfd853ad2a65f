import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { MAX_MESSAGE_LENGTH } from '../../relay/dto/send-message.dto';

/** Seven days: no session lives longer (ttlSeconds' limit), so no later rescue could find one. */
export const MAX_RESCUE_AFTER_SECONDS = 7 * 24 * 3600;

export class SetRescueDto {
  @ApiProperty({
    minimum: 0,
    maximum: MAX_RESCUE_AFTER_SECONDS,
    example: 300,
    description:
      'Once a provider’s breaker has been OPEN this many seconds, each of your active sessions on it moves to a proxy number on the first provider that admits it (same id, channels, expiry and metadata); 0: as soon as it opens.',
  })
  @IsInt({ message: 'afterSeconds must be a whole number of seconds' })
  @Min(0, { message: `afterSeconds must be from 0 to ${MAX_RESCUE_AFTER_SECONDS}` })
  @Max(MAX_RESCUE_AFTER_SECONDS, { message: `afterSeconds must be from 0 to ${MAX_RESCUE_AFTER_SECONDS}` })
  afterSeconds: number;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: MAX_MESSAGE_LENGTH,
    example: 'Our line changed: reply to this number to keep talking to your driver.',
    description:
      'Texted to each participant from the new number after a move, where the session has the sms channel (recorded as an interaction, like a message from the app). Null or left out: no text.',
  })
  // Null and left out are the same: no notice.
  @IsOptional()
  @IsString({ message: 'notice must be a text, or null' })
  @Matches(/\S/, { message: 'notice must not be empty or blank' })
  @MaxLength(MAX_MESSAGE_LENGTH, { message: `notice must be at most ${MAX_MESSAGE_LENGTH} characters` })
  notice?: string | null;
}

export class RescueSettingsDto {
  @ApiProperty({ description: 'Whether the account’s sessions are rescued from a provider that stays down.' })
  enabled: boolean;

  @ApiProperty({ type: Number, nullable: true, description: 'Seconds a provider must have been OPEN; null while rescue is off.' })
  afterSeconds: number | null;

  @ApiProperty({ type: String, nullable: true, description: 'Texted from the new number after a move; null: none.' })
  notice: string | null;

  static from(setting: { afterSeconds: number | null; notice: string | null }): RescueSettingsDto {
    return { enabled: setting.afterSeconds !== null, afterSeconds: setting.afterSeconds, notice: setting.notice };
  }
}
