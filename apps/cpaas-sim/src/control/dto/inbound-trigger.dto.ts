import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateIf } from 'class-validator';

const E164 = /^\+[1-9]\d{1,14}$/;

/** `POST /_sim/providers/:name/inbound`: a phone user texting or calling `to` from `from`. */
export class InboundTriggerDto {
  @IsIn(['sms', 'voice'])
  channel: 'sms' | 'voice';

  @Matches(E164, { message: 'from must be an E.164 number' })
  from: string;

  @Matches(E164, { message: 'to must be an E.164 number' })
  to: string;

  @ValidateIf((trigger: InboundTriggerDto) => trigger.channel === 'sms' || trigger.text !== undefined)
  @IsString()
  @MaxLength(1600)
  text?: string;

  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(86_400)
  durationSec?: number;
}
