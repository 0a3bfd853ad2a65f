import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, MinLength } from 'class-validator';

export class CreateAccountDto {
  @ApiProperty({ example: 'ride-hailing-prod' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ example: 'backend' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  label?: string;
}

export class CreateApiKeyDto {
  @ApiPropertyOptional({ example: 'ci' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  label?: string;
}

export class ApiKeyDto {
  @ApiProperty()
  id: string;

  @ApiProperty()
  accountId: string;

  @ApiProperty({ description: 'First characters of the key, to tell keys apart.' })
  prefix: string;

  @ApiProperty({ type: String, nullable: true })
  label: string | null;

  @ApiProperty()
  createdAt: string;

  @ApiProperty({ type: String, nullable: true })
  revokedAt: string | null;
}

export class CreatedApiKeyDto extends ApiKeyDto {
  @ApiProperty({ description: 'The key itself: shown this once, stored only hashed.' })
  key: string;
}

export class AccountDto {
  @ApiProperty()
  id: string;

  @ApiProperty()
  name: string;

  @ApiProperty()
  createdAt: string;

  @ApiProperty({ type: [ApiKeyDto] })
  apiKeys: ApiKeyDto[];
}

export class FirstWebhookSecretDto {
  @ApiProperty({
    description: "The account's first webhook signing secret, shown this once.",
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret: string;

  @ApiProperty()
  createdAt: string;
}

export class CreatedAccountDto {
  @ApiProperty({ type: AccountDto })
  account: AccountDto;

  @ApiProperty({ type: CreatedApiKeyDto })
  apiKey: CreatedApiKeyDto;

  @ApiProperty({ type: FirstWebhookSecretDto })
  webhookSecret: FirstWebhookSecretDto;
}

export class AccountListDto {
  @ApiProperty({ type: [AccountDto] })
  accounts: AccountDto[];
}
