import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
  registerDecorator,
  type ValidationArguments,
} from 'class-validator';
import type { Channel } from '../../numbers/proxy-number.entity';

export const DEFAULT_TTL_SECONDS = 3600;
export const MAX_TTL_SECONDS = 7 * 24 * 3600;
export const MAX_METADATA_BYTES = 4096;

/** A phone number as written: E.164, or national digits (read with the account's default country by ParticipantNumbers). */
const WRITTEN_NUMBER = /^\+?[0-9][0-9 ().-]{4,24}$/;

export class ParticipantDto {
  @ApiProperty({
    example: '+2348030000001',
    description:
      'E.164; or, once the account has a default country (PUT /v1/account/default-country), a national number such as 08030000001. Answers are E.164.',
  })
  @Matches(WRITTEN_NUMBER, {
    message: 'number must be an E.164 number, like +2348030000001 (or a national number once the account has a default country)',
  })
  number: string;
}

/** The two participants must be different people. */
function DistinctNumbers(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'distinctNumbers',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: 'participants must be two different numbers' },
      validator: {
        validate: (value: unknown) => {
          if (!Array.isArray(value) || value.length !== 2) return true; // the size rule speaks for that
          const [a, b] = value as Array<{ number?: unknown }>;
          return a?.number !== b?.number;
        },
      },
    });
}

/** A small JSON object: at most MAX_METADATA_BYTES once serialised. */
function SmallJsonObject(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'smallJsonObject',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: (args: ValidationArguments) => `${args.property} must be at most ${MAX_METADATA_BYTES} bytes of JSON` },
      validator: { validate: (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? {})) <= MAX_METADATA_BYTES },
    });
}

export class CreateSessionDto {
  @ApiProperty({ enum: ['voice', 'sms'] })
  @IsIn(['voice', 'sms'], { message: 'channel must be voice or sms' })
  channel: Channel;

  @ApiProperty({ type: [ParticipantDto], minItems: 2, maxItems: 2 })
  @ArrayMinSize(2, { message: 'participants must hold exactly two participants' })
  @ArrayMaxSize(2, { message: 'participants must hold exactly two participants' })
  @ValidateNested({ each: true })
  @Type(() => ParticipantDto)
  @DistinctNumbers()
  participants: ParticipantDto[];

  @ApiPropertyOptional({ default: DEFAULT_TTL_SECONDS, minimum: 60, maximum: MAX_TTL_SECONDS })
  @IsOptional()
  @IsInt({ message: 'ttlSeconds must be a whole number of seconds' })
  @Min(60, { message: 'ttlSeconds must be at least 60' })
  @Max(MAX_TTL_SECONDS, { message: `ttlSeconds must be at most ${MAX_TTL_SECONDS} (7 days)` })
  ttlSeconds?: number;

  @ApiPropertyOptional({ example: 'https://example.com/hooks/broker', maxLength: 2048 })
  @IsOptional()
  @MaxLength(2048, { message: 'callbackUrl must be at most 2048 characters' })
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'callbackUrl must be an http or https URL' },
  )
  callbackUrl?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { rideId: 'r-123' } })
  @IsOptional()
  @IsObject({ message: 'metadata must be a JSON object' })
  @SmallJsonObject()
  metadata?: Record<string, unknown>;
}
