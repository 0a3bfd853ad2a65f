import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { decimalInteger } from '../../common/pagination/cursor-page-query.dto';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, registerDecorator } from 'class-validator';
import type { BreakerScope, Leadership } from '../cluster/breaker-leadership';
import type { ProviderPoolUsage } from '../pool-usage';
import type { ProviderHealth, ProviderTransition } from '../provider-breakers';

export class ProviderHealthDto {
  @ApiProperty({ example: 'primary' })
  name: string;

  @ApiProperty({ enum: ['CLOSED', 'OPEN', 'HALF_OPEN'] })
  state: 'CLOSED' | 'OPEN' | 'HALF_OPEN';

  @ApiProperty({ type: String, nullable: true, description: 'When the breaker opened; non-null only while OPEN.' })
  openedAt: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The failure that most recently tripped the breaker.' })
  lastError: string | null;

  @ApiProperty({ description: 'Disabled by an operator (separate from the breaker).' })
  disabled: boolean;

  @ApiProperty({ type: String, nullable: true, description: 'Why an operator disabled it.' })
  disabledReason: string | null;

  @ApiProperty({ description: 'When the current state was entered.' })
  since: string;

  @ApiProperty({ description: "Why the last transition happened: the rule's words, or the operator's when it was forced." })
  reason: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description:
      'Who forced the current state (`admin`: the admin token), `reason` then being their why; null when the breaker’s own rules put it there. A forced state follows the rules from there.',
  })
  forcedBy: string | null;

  @ApiProperty()
  consecutiveFailures: number;

  @ApiProperty({ description: 'Calls in the sliding error-rate window (CLOSED).' })
  windowCalls: number;

  @ApiProperty()
  windowErrorRate: number;

  @ApiProperty({ description: 'Consecutive passing health checks (OPEN).' })
  healthPasses: number;

  @ApiProperty({ description: 'Probe outcomes recorded (HALF_OPEN): real traffic and health checks.' })
  probes: number;

  @ApiProperty()
  probeSuccesses: number;

  @ApiProperty({
    description:
      'HALF_OPEN: how many of the probes were real traffic (binds, sends, bridged calls), not health checks. The close gate needs BREAKER_CLOSE_MIN_PROBES of them: health checks alone never close a breaker.',
  })
  trafficProbes: number;

  @ApiProperty({ description: 'Active sessions on this provider (refreshed every few seconds).' })
  activeSessions: number;

  @ApiProperty({
    description: 'The same, by the channels the sessions carry.',
    example: { voice: 1, sms: 4, 'voice+sms': 7 },
  })
  activeSessionsByChannels: Record<string, number>;

  @ApiProperty({
    description:
      'Proxy numbers: held, enabled, carrying at least one active session; and the enabled ones that carry voice, sms. `quarantineSeconds` (SESSION_NUMBER_QUARANTINE_SECONDS): after a session ends, its number takes neither participant with anyone else for this long, so a participant who meets k different people within it needs k numbers of the pool, not one (docs/design.md#number-quarantine).',
    example: { total: 10, enabled: 10, inUse: 3, voice: 10, sms: 8, quarantineSeconds: 86400 },
  })
  pool: { total: number; enabled: number; inUse: number; voice: number; sms: number; quarantineSeconds: number };

  @ApiProperty({
    enum: ['cluster', 'replica'],
    description:
      '`cluster`: this replica follows the one breaker the cluster shares. `replica`: it cannot reach the database and decides on its own breaker until it can.',
  })
  scope: BreakerScope;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The replica that leads the breakers (health checks, transitions); null when none is known.',
  })
  leader: string | null;

  static from(health: ProviderHealth, usage: ProviderPoolUsage, leadership: Leadership): ProviderHealthDto {
    const s = health.status;
    return {
      name: health.name,
      state: s.state,
      openedAt: s.openedAt === null ? null : new Date(s.openedAt).toISOString(),
      lastError: s.lastError,
      disabled: health.disabled,
      disabledReason: health.disabledReason,
      since: new Date(s.since).toISOString(),
      reason: s.reason,
      forcedBy: s.forcedBy,
      consecutiveFailures: s.consecutiveFailures,
      windowCalls: s.windowCalls,
      windowErrorRate: s.windowErrorRate,
      healthPasses: s.healthPasses,
      probes: s.probes,
      probeSuccesses: s.probeSuccesses,
      trafficProbes: s.trafficProbes,
      activeSessions: usage.activeSessions,
      activeSessionsByChannels: usage.activeSessionsByChannels,
      pool: usage.pool,
      scope: leadership.scope,
      leader: leadership.leader,
    };
  }
}

export class CpaasHealthDto {
  @ApiProperty({ type: [ProviderHealthDto] })
  providers: ProviderHealthDto[];

  @ApiProperty({ description: 'The replica that answered.' })
  replica: string;

  @ApiProperty({ type: String, nullable: true, description: 'The replica that leads the breakers; null when none is known.' })
  leader: string | null;

  @ApiProperty({
    example: '2026-07-15T12:00:01.004Z',
    description:
      "When the replica that answered started: no state of a provider is known from before it, unless a state's `since` or a persisted transition says so.",
  })
  startedAt: string;

  @ApiProperty({ example: '2026-07-15T12:15:35.907Z' })
  timestamp: string;
}

export class BreakerTransitionDto {
  @ApiProperty()
  id: string;

  @ApiProperty()
  provider: string;

  @ApiProperty({ enum: ['CLOSED', 'OPEN', 'HALF_OPEN'] })
  from: string;

  @ApiProperty({ enum: ['CLOSED', 'OPEN', 'HALF_OPEN'] })
  to: string;

  @ApiProperty()
  reason: string;

  @ApiProperty({ type: String, nullable: true })
  lastError: string | null;

  @ApiProperty()
  at: string;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Who forced this transition (`admin`), `reason` being their why; null when the breaker’s own rules made it.',
  })
  forcedBy: string | null;

  static fromLive(transition: ProviderTransition): Omit<BreakerTransitionDto, 'id'> {
    return {
      provider: transition.provider,
      from: transition.from,
      to: transition.to,
      reason: transition.reason,
      lastError: transition.lastError,
      at: new Date(transition.at).toISOString(),
      forcedBy: transition.forcedBy,
    };
  }
}

export class BreakerHistoryDto {
  @ApiProperty({ type: [BreakerTransitionDto], description: 'Newest first.' })
  transitions: BreakerTransitionDto[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for older transitions.' })
  nextCursor: string | null;
}

const HISTORY_LIMIT_MESSAGE = 'limit must be a whole number from 1 to 500';

export class BreakerHistoryQueryDto {
  @ApiPropertyOptional({ example: 'primary' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  provider?: string;

  @ApiPropertyOptional({ default: 50, minimum: 1, maximum: 500 })
  @IsOptional()
  @Transform(decimalInteger)
  @IsInt({ message: HISTORY_LIMIT_MESSAGE })
  @Min(1, { message: HISTORY_LIMIT_MESSAGE })
  @Max(500, { message: HISTORY_LIMIT_MESSAGE })
  limit?: number;

  @ApiPropertyOptional()
  @IsOptional()
  @Matches(/^\d{1,18}$/, { message: 'cursor must be a cursor returned by this route' })
  cursor?: string;
}

export class DisableProviderDto {
  @ApiPropertyOptional({ example: 'carrier maintenance window' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  reason?: string;
}

/** One message for each way a reason can be missing or wrong, rather than every rule's at once. */
function OperatorReason(max: number): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'operatorReason',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && /\S/.test(value) && value.length <= max,
        defaultMessage: (args) => {
          const value: unknown = args?.value;
          return value === undefined || value === null
            ? 'reason is required: say why (it is recorded in the breaker history)'
            : typeof value !== 'string'
              ? 'reason must be a string'
              : !/\S/.test(value)
                ? 'reason must not be blank: say why (it is recorded in the breaker history)'
                : `reason must be at most ${max} characters`;
        },
      },
    });
}

/** `POST /v1/admin/providers/:name/breaker`. */
export class ForceBreakerDto {
  @ApiProperty({
    enum: ['OPEN', 'CLOSED'],
    description: 'OPEN: out of rotation until it recovers by the rules; CLOSED: back in rotation with fresh counters.',
  })
  @IsIn(['OPEN', 'CLOSED'], { message: "state must be OPEN or CLOSED (HALF_OPEN is reached by the breaker's own rules only)" })
  state: 'OPEN' | 'CLOSED';

  @ApiProperty({ example: 'carrier reports an SS7 outage in Lagos', maxLength: 500, description: 'Why: recorded in the breaker history.' })
  @OperatorReason(500)
  reason: string;
}

export class NumberImportFailureDto {
  @ApiProperty({ example: '+15005550001' })
  number: string;

  @ApiProperty({ example: 'primary: HTTP 503 (Twilio 20500) Twilio server error on numbers' })
  reason: string;
}

/** What `POST /v1/admin/providers/:name/numbers/import` did. */
export class NumberImportDto {
  @ApiProperty({ example: 'primary' })
  provider: string;

  @ApiProperty({ type: [String], description: 'Numbers put into the pool by this run.' })
  added: string[];

  @ApiProperty({ type: [String], description: 'Numbers the pool held already.' })
  alreadyThere: string[];

  @ApiProperty({ type: [String], description: 'Numbers whose SMS, voice and status webhooks this run pointed at PUBLIC_URL.' })
  updated: string[];

  @ApiProperty({ type: [NumberImportFailureDto] })
  failed: NumberImportFailureDto[];

  @ApiProperty({ description: 'False when the run changed nothing (a second run).' })
  changed: boolean;
}
