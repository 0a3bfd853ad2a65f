import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength, ValidateIf } from 'class-validator';

export class SetCallbackUrlDto {
  @ApiProperty({
    type: String,
    nullable: true,
    maxLength: 2048,
    example: 'https://example.com/hooks/sessions',
    description: 'Where session events go when a session has no callbackUrl of its own; null clears it. Public http(s) addresses only.',
  })
  @ValidateIf((dto: SetCallbackUrlDto) => dto.callbackUrl !== null)
  @IsString({ message: 'callbackUrl must be an http or https URL, or null' })
  @MaxLength(2048, { message: 'callbackUrl must be at most 2048 characters' })
  callbackUrl: string | null;
}

export class CallbackUrlDto {
  @ApiProperty({ type: String, nullable: true })
  callbackUrl: string | null;

  @ApiPropertyOptional({
    description:
      "Present only when the account's current webhook secret was never shown before (made with the account, or by the migration that gave older accounts one): shown this once.",
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  webhookSecret?: string;
}

export class WebhookSecretStatusDto {
  @ApiProperty({ description: 'Whether the account has a signing secret (every account gets one when it is made).' })
  configured: boolean;

  @ApiProperty({
    description: 'Whether the current secret was already shown; false: POST /v1/account/webhook-secret/reveal shows it, once.',
  })
  revealed: boolean;

  @ApiProperty({ type: String, nullable: true })
  createdAt: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Until then the previous secret signs too (24 h after a rotation).' })
  previousSecretExpiresAt: string | null;
}

export class RotatedWebhookSecretDto {
  @ApiProperty({ description: 'The new secret, shown this once.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
  secret: string;

  @ApiProperty()
  createdAt: string;

  @ApiProperty({ type: String, nullable: true, description: 'The previous secret keeps signing until then; null if there was none.' })
  previousSecretExpiresAt: string | null;
}

export class RevealedWebhookSecretDto {
  @ApiProperty({ description: 'The current secret, shown this once.', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
  secret: string;

  @ApiProperty()
  createdAt: string;

  @ApiProperty({ type: String, nullable: true, description: 'The previous secret keeps signing until then; null if there is none.' })
  previousSecretExpiresAt: string | null;
}
