import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
  registerDecorator,
  type ValidationArguments,
} from 'class-validator';
import type { Channel } from '../../numbers/proxy-number.entity';

export const DEFAULT_TTL_SECONDS = 3600;
export const MAX_TTL_SECONDS = 7 * 24 * 3600;
const MIN_TTL_SECONDS = 60;
const MAX_METADATA_BYTES = 4096;
const MIN_IDLE_TTL_SECONDS = 60;
/** As Twilio Proxy's UniqueName. */
export const MAX_UNIQUE_NAME_LENGTH = 191;
const CHANNELS: readonly Channel[] = ['voice', 'sms'];
type NumberSelection = 'any' | 'prefer-sticky';

/** A session's channels in the one spelling it keeps: voice before sms, each once. */
export function sessionChannels(body: Pick<CreateSessionDto, 'channel' | 'channels'>): Channel[] {
  const asked = body.channels ?? (body.channel ? [body.channel] : []);
  return CHANNELS.filter((c) => asked.includes(c));
}

/** A phone number as written: E.164, or national digits (read with the account's default country by ParticipantNumbers). */
export const WRITTEN_NUMBER = /^\+?[0-9][0-9 ().-]{4,24}$/;

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

/** Why `value` cannot be a session's `channels` beside `channel`, or null when it can. */
function channelsProblem(value: unknown, channel: unknown): string | null {
  if (value === undefined) return channel === undefined ? 'channels must be given: voice, sms or both (or the older channel)' : null;
  if (!Array.isArray(value) || value.length === 0) return 'channels must be a non-empty list of voice and sms';
  if (value.some((c) => !CHANNELS.includes(c as Channel))) return 'each of channels must be voice or sms';
  if (new Set(value).size !== value.length) return 'channels must name each channel once';
  if (channel !== undefined && (value.length !== 1 || value[0] !== channel)) return 'channels and channel disagree: give channels alone';
  return null;
}

/**
 * `channels`: a non-empty list of voice and sms, each once; or, left out, the older `channel` (one of them).
 * When both are given they must say the same.
 */
function SessionChannels(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'sessionChannels',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: (args: ValidationArguments) => channelsProblem(args.value, (args.object as CreateSessionDto).channel) ?? '' },
      validator: {
        validate: (value: unknown, args: ValidationArguments) => channelsProblem(value, (args.object as CreateSessionDto).channel) === null,
      },
    });
}

export class CreateSessionDto {
  /** The validation pipe's fast path for the common body (readPlainCreateSession, below). */
  static readonly readPlainly = readPlainCreateSession;

  @ApiPropertyOptional({
    enum: ['voice', 'sms'],
    deprecated: true,
    description: 'The older way to name one channel; `channels: ["sms"]` says the same.',
  })
  // Left out is fine (channels says it); null is not a channel.
  @ValidateIf((dto: CreateSessionDto) => dto.channel !== undefined)
  @IsIn(['voice', 'sms'], { message: 'channel must be voice or sms' })
  channel?: Channel;

  @ApiPropertyOptional({
    type: [String],
    enum: ['voice', 'sms'],
    minItems: 1,
    maxItems: 2,
    example: ['voice', 'sms'],
    description: 'What the session carries: calls, texts or both, through one proxy number that carries every one of them.',
  })
  @SessionChannels()
  channels?: Channel[];

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
  @Min(MIN_TTL_SECONDS, { message: `ttlSeconds must be at least ${MIN_TTL_SECONDS}` })
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

  @ApiPropertyOptional({
    minimum: MIN_IDLE_TTL_SECONDS,
    maximum: MAX_TTL_SECONDS,
    description: 'Expire the session this long after its last interaction (or its creation); expiresAt stays the hard limit.',
  })
  @IsOptional()
  @IsInt({ message: 'idleTtlSeconds must be a whole number of seconds' })
  @Min(MIN_IDLE_TTL_SECONDS, { message: `idleTtlSeconds must be at least ${MIN_IDLE_TTL_SECONDS}` })
  @Max(MAX_TTL_SECONDS, { message: `idleTtlSeconds must be at most ${MAX_TTL_SECONDS} (7 days)` })
  idleTtlSeconds?: number;

  @ApiPropertyOptional({
    maxLength: MAX_UNIQUE_NAME_LENGTH,
    example: 'ride-r-123',
    description: 'Your name for it, unique among your live sessions (409 on a second); GET /v1/sessions?uniqueName= finds it.',
  })
  @IsOptional()
  @IsString({ message: 'uniqueName must be a string' })
  @MinLength(1, { message: 'uniqueName must not be empty' })
  @MaxLength(MAX_UNIQUE_NAME_LENGTH, { message: `uniqueName must be at most ${MAX_UNIQUE_NAME_LENGTH} characters` })
  @Matches(/^[^\u0000-\u001f\u007f]*$/, { message: 'uniqueName must not contain control characters' })
  uniqueName?: string;

  @ApiPropertyOptional({
    example: 'https://example.com/hooks/intercept',
    maxLength: 2048,
    description:
      "Asked before each relay and bridge of this session (instead of the account's intercept URL): 2xx lets it through, 403 blocks it.",
  })
  @IsOptional()
  @MaxLength(2048, { message: 'interceptUrl must be at most 2048 characters' })
  @IsUrl(
    { protocols: ['http', 'https'], require_protocol: true, require_tld: false },
    { message: 'interceptUrl must be an http or https URL' },
  )
  interceptUrl?: string;

  @ApiPropertyOptional({
    enum: ['any', 'prefer-sticky'],
    default: 'any',
    description:
      '`prefer-sticky`: the proxy number the first participant had in their most recent session, when the pool rule and the number quarantine (SESSION_NUMBER_QUARANTINE_SECONDS: with another partner, only once it has passed) allow it.',
  })
  @IsOptional()
  @IsIn(['any', 'prefer-sticky'], { message: 'numberSelection must be any or prefer-sticky' })
  numberSelection?: NumberSelection;
}

/** The fields the plain reading knows: a body with any other field, or a null, goes to class-validator. */
const PLAIN_FIELDS: ReadonlySet<string> = new Set([
  'channel',
  'channels',
  'participants',
  'ttlSeconds',
  'idleTtlSeconds',
  'numberSelection',
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  // An Object.prototype of any realm (its own prototype is null), or none: what JSON.parse makes.
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === null || Object.getPrototypeOf(prototype) === null;
}

/** A whole number of seconds in [min, max], the fast path's reading of `@IsInt @Min @Max`. */
function secondsWithin(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/**
 * The common create body read without class-transformer and class-validator: `channel` or `channels`, two
 * participants written `{ number }`, and optionally `ttlSeconds`, `idleTtlSeconds` and `numberSelection`, each
 * present with a value that passes the decorators' rules above (the same constants, the same `channelsProblem`).
 * What it answers is what the validation pipe would make of the body: the DTO with its participants as
 * ParticipantDto. Anything else (another field, a null, a value a rule refuses) answers undefined and goes
 * through the pipe as before, so every refusal and its message still come from the decorators; a spec
 * (create-session.dto.spec.ts) checks every body this reads against the pipe. The pipe's depth and unstorable-text
 * checks run first (common/problem/validation.ts).
 */
export function readPlainCreateSession(value: unknown): CreateSessionDto | undefined {
  if (!isPlainObject(value)) return undefined;
  for (const key of Object.keys(value)) if (!PLAIN_FIELDS.has(key) || value[key] === null || value[key] === undefined) return undefined;
  const { channel, channels, participants, ttlSeconds, idleTtlSeconds, numberSelection } = value;
  if (channel !== undefined && channel !== 'voice' && channel !== 'sms') return undefined;
  if (channelsProblem(channels, channel) !== null) return undefined;
  if (!Array.isArray(participants) || participants.length !== 2) return undefined;
  const numbers: string[] = [];
  for (const participant of participants) {
    if (!isPlainObject(participant)) return undefined;
    const keys = Object.keys(participant);
    if (keys.length !== 1 || keys[0] !== 'number') return undefined;
    const number = participant.number;
    if (typeof number !== 'string' || !WRITTEN_NUMBER.test(number)) return undefined;
    numbers.push(number);
  }
  if (numbers[0] === numbers[1]) return undefined;
  if (ttlSeconds !== undefined && !secondsWithin(ttlSeconds, MIN_TTL_SECONDS, MAX_TTL_SECONDS)) return undefined;
  if (idleTtlSeconds !== undefined && !secondsWithin(idleTtlSeconds, MIN_IDLE_TTL_SECONDS, MAX_TTL_SECONDS)) return undefined;
  if (numberSelection !== undefined && numberSelection !== 'any' && numberSelection !== 'prefer-sticky') return undefined;
  const dto = new CreateSessionDto();
  if (channel !== undefined) dto.channel = channel;
  if (channels !== undefined) dto.channels = [...(channels as Channel[])];
  dto.participants = numbers.map((number) => Object.assign(new ParticipantDto(), { number }));
  if (ttlSeconds !== undefined) dto.ttlSeconds = ttlSeconds as number;
  if (idleTtlSeconds !== undefined) dto.idleTtlSeconds = idleTtlSeconds as number;
  if (numberSelection !== undefined) dto.numberSelection = numberSelection;
  return dto;
}
