import { ApiProperty } from '@nestjs/swagger';

export class AttemptDto {
  @ApiProperty({ example: 1 })
  number: number;

  @ApiProperty()
  startedAt: string;

  @ApiProperty({ description: 'Latency of the attempt, in milliseconds.' })
  durationMs: number;

  @ApiProperty({ type: Number, nullable: true, description: 'The HTTP status the endpoint answered; null when it did not answer.' })
  statusCode: number | null;

  @ApiProperty({ type: String, nullable: true, example: 'HTTP 503' })
  error: string | null;

  @ApiProperty()
  delivered: boolean;
}

export class EndpointStateDto {
  @ApiProperty({
    enum: ['healthy', 'down', 'breaker-open', 'trial'],
    description:
      '`down`: 3 failures in a row, one attempt every 5 minutes; `breaker-open`: the callback URL breaker is open; `trial`: one attempt at a time until a 2xx.',
  })
  condition: string;

  @ApiProperty({ type: String, nullable: true, description: 'Nothing is sent to this URL before then.' })
  blockedUntil: string | null;

  @ApiProperty({ enum: ['CLOSED', 'OPEN', 'HALF_OPEN'], description: 'State of the per-callback-URL breaker.' })
  breakerState: string;

  @ApiProperty({ type: String, nullable: true })
  lastError: string | null;
}

export class DeliveryDto {
  @ApiProperty({ description: 'The delivery id: the `webhook-id` header of every attempt.' })
  id: string;

  @ApiProperty()
  eventId: string;

  @ApiProperty()
  eventType: string;

  @ApiProperty({ type: String, nullable: true })
  sessionId: string | null;

  @ApiProperty()
  url: string;

  @ApiProperty({
    enum: ['pending', 'delivered', 'given_up'],
    description: '`given_up`: not delivered within 72 h of the event; never sent again.',
  })
  status: string;

  @ApiProperty()
  createdAt: string;

  @ApiProperty({ type: String, nullable: true })
  nextAttemptAt: string | null;

  @ApiProperty({ description: 'Given up if not delivered by then.' })
  expiresAt: string;

  @ApiProperty({ type: String, nullable: true })
  deliveredAt: string | null;

  @ApiProperty({ type: String, nullable: true })
  givenUpAt: string | null;

  @ApiProperty({ type: [AttemptDto], description: 'Oldest first.' })
  attempts: AttemptDto[];

  @ApiProperty({ type: EndpointStateDto, nullable: true, description: 'The state of the URL, once something was sent to it.' })
  endpoint: EndpointStateDto | null;
}
