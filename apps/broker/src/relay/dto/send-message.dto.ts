import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { E164 } from '../../numbers/dto/proxy-number.dto';

/** As Twilio's Messages API takes a body: at most 1 600 characters (split into segments by the provider). */
export const MAX_MESSAGE_LENGTH = 1600;

export class SendMessageDto {
  @ApiProperty({ example: '+2348030000001', description: 'One of the session’s participants (E.164).' })
  @Matches(E164, { message: 'to must be an E.164 number, like +2348030000001' })
  to: string;

  @ApiProperty({ example: 'Your driver has arrived', maxLength: MAX_MESSAGE_LENGTH })
  @IsString({ message: 'text must be a string' })
  @MinLength(1, { message: 'text must not be empty' })
  @MaxLength(MAX_MESSAGE_LENGTH, { message: `text must be at most ${MAX_MESSAGE_LENGTH} characters` })
  text: string;
}
